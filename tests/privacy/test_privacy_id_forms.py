"""The national-id forms run on a text are chosen by one search, never leaving one out.

`casework.privacy.ids` runs the forms found without a cue (SSN, CPF, INSEE, codice fiscale, DNI,
NIE, NINO) only where their one-pattern union matches. These tests hold that choice to the
forms' own Python patterns over ids written by Faker (its locales' `ssn`, `nif`, `nie`, `cpf`),
alone and inside messages, and over random strings of the characters the forms are made of.
"""

from __future__ import annotations

import random

from faker import Faker

from casework.privacy.ids import _FORMS, _forms_for

_LOCALES = ("en_US", "en_GB", "fr_FR", "it_IT", "nl_NL", "pt_BR", "es_ES", "pl_PL", "en_CA")


def _matching(text: str) -> list[str]:
    return [rule.pattern.pattern for rule in _FORMS if rule.pattern.search(text)]


def _chosen(text: str) -> list[str]:
    return [rule.pattern.pattern for rule in _forms_for(text)]


def _ids() -> list[str]:
    out = []
    for locale in _LOCALES:
        fake = Faker(locale)
        fake.seed_instance(3)
        for _ in range(120):
            out.append(str(fake.ssn()))
        if locale == "es_ES":
            out += [str(fake.nif()) for _ in range(120)] + [str(fake.nie()) for _ in range(120)]
        if locale == "pt_BR":
            out += [str(fake.cpf()) for _ in range(120)]
    return out


def test_every_form_matching_a_faker_id_is_run() -> None:
    found = 0
    for value in _ids():
        for text in (value, f"my id is {value}.", f"ref:{value.lower()}", f"{value}x"):
            matching = _matching(text)
            found += bool(matching)
            assert set(matching) <= set(_chosen(text)), text
    assert found > 1500  # most of them are written in a form found without a cue


def test_every_form_matching_a_random_string_is_run() -> None:
    rng = random.Random(9)
    alphabet = "0123456789 -./ABLMXYZabxz2"
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(6, 30)))
        assert set(_matching(text)) <= set(_chosen(text)), text


def test_a_text_holding_a_form_runs_them_all_and_one_holding_none_runs_none() -> None:
    every = [rule.pattern.pattern for rule in _FORMS]
    assert _chosen("SSN — 123-45-6789") == every
    assert _chosen("SSN 123-45-6789") == every
    assert _chosen("no id here — none") == []
    assert _chosen("no id here at all, order 123456") == []
