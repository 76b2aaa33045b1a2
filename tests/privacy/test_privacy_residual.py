"""The residual-PII check: an independent pass over released cases."""

from __future__ import annotations

import importlib.util
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from casework.dataset import load_dataset
from casework.mining import MineOptions, mine
from casework.privacy.residual import presidio_second_opinion, residual_pii
from casework.project import load_project
from casework.schema import Case

TRACES = Path(__file__).resolve().parents[2] / "examples" / "refunds" / "traces"


def _case(text: str, **situation: Any) -> Case:
    return Case.model_validate(
        {"id": "c1", "slice": "s", "split": "dev", "source": "hand",
         "situation": {"goal": "g", "turns": [{"role": "user", "content": text}], **situation}}
    )  # fmt: skip


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("write to jane.roe@gmail.com", "email"),
        ("card 5555 5555 5555 4444", "card"),
        ("IBAN DE89 3704 0044 0532 0130 00", "iban"),
        ("call +49 30 901820", "phone"),
        ("call (415) 867-5309", "phone"),
        ("from 81.2.69.160", "ip"),
        ("from 2a00:1450:4009:81f::200e", "ip"),
        ("write to jane.roe%40gmail.com", "email"),
        ("see https://portal.example.com/users/jane.roe?email=email_88dd97b5524a", "url"),
        ("see https://jane.roe@portal.example.com/inbox", "url"),
        ("see https://portal.example.com/~jroe/cv.pdf", "url"),
        ("see https://x.example.com/track?email=jane.roe%40gmail.com", "url"),
    ],
)
def test_raw_pii_is_found_and_not_repeated(text: str, kind: str) -> None:
    [finding] = residual_pii([_case(text)])
    assert (finding.check, finding.severity, finding.case_id) == ("residual_pii", "error", "c1")
    assert finding.subject == f"situation.turns[0].content: {kind}"
    raw = text.split(" ", 1)[1] if kind != "email" else text.split()[-1]
    assert raw not in finding.message and raw not in str(finding)
    assert "jane.roe" not in str(finding)


def test_pseudonyms_examples_and_fictional_ranges_are_clean() -> None:
    text = (
        "email_0123456789ab phone_9876543210ab card_4111111111ab support@example.com "
        "192.0.2.7 2001:db8::1 (202) 555-0143 020 7946 0958 version 1.2.3 on 2024-05-01 at 10:30 "
        "support%40example.com https://shop.example.com/account/url_0123456789ab/orders "
        "https://shop.example.com/track?email=email_0123456789ab https://example.com/help/refunds"
    )
    assert residual_pii([_case(text)]) == []


def test_fixtures_state_and_keys_are_scanned() -> None:
    case = _case(
        "hi",
        fixtures=[{"tool": "t", "response": {"contact": "jane.roe@gmail.com"}}],
        state={"jane.roe@gmail.com": {"ip": "81.2.69.160"}},
    )
    subjects = sorted(f.subject for f in residual_pii([case]))
    assert subjects == [
        "situation.fixtures[0].response.contact: email",
        "situation.state.jane.roe@gmail.com.ip: ip",
        "situation.state.jane.roe@gmail.com: email",
    ]


def test_mined_example_rows_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "casework.toml").write_text(
        "[privacy.id_patterns]\norder = '\\bORD-\\d{6}\\b'\ncustomer = '\\bCUS-\\d{5}\\b'\n",
        encoding="utf-8",
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.chdir(root)
    monkeypatch.setenv("CASEWORK_PSEUDONYM_KEY", "residual-tests-key-not-secret-0123456")
    project = load_project(root)
    mine(project, [TRACES], "refunds", MineOptions(now=datetime(2026, 11, 1, tzinfo=UTC)))
    assert residual_pii(load_dataset(project, "refunds").cases) == []


@pytest.mark.skipif(
    importlib.util.find_spec("presidio_analyzer") is None, reason="extra casework[presidio]"
)
def test_presidio_second_opinion_is_model_free_and_offline() -> None:
    findings = presidio_second_opinion(
        [_case("mail jane.roe@gmail.com or card 5555 5555 5555 4444")]
    )
    assert sorted(f.subject for f in findings) == [
        "situation.turns[0].content: card",
        "situation.turns[0].content: email",
    ]
    assert all(f.severity == "warning" and f.check == "residual_pii_presidio" for f in findings)
    assert presidio_second_opinion([_case("email_0123456789ab card_0123456789ab")]) == []


def _mined(text: str) -> Case:
    case = _case(text)
    return case.model_copy(update={"source": "mined"})


@pytest.mark.parametrize(
    "text",
    [
        "I'm Maria Rossi and my parcel is late",
        "Hi, my name is Oderwald",
        "Thanks,\nEhrenfried Dobes",
        "This is Jennifer from accounting",
    ],
)
def test_a_name_typed_in_a_mined_case_is_raw_pii(text: str) -> None:
    [finding] = residual_pii([_mined(text)])
    assert finding.subject == "situation.turns[0].content: name"
    assert "Rossi" not in str(finding) and "Dobes" not in str(finding)


def test_names_in_hand_written_cases_and_ordinary_words_pass() -> None:
    assert residual_pii([_case("Thanks, Marta")]) == []
    assert residual_pii([_mined("I'm Not sure. Thanks, The team. I'm name_0123456789ab")]) == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("my ssn is 742-38-1981", "national id"),
        ("SSN 742381981", "national id"),
        ("my BSN is 740389129", "national id"),
        ("CPF 024.730.543-04", "national id"),
        ("zip code 94105", "postcode"),
        ("postcode SW1A 1AA", "postcode"),
        ("card exp 03/27", "expiry"),
    ],
)
def test_national_ids_postcodes_and_expiry_dates_are_raw_pii(text: str, kind: str) -> None:
    [finding] = residual_pii([_case(text)])
    assert finding.subject == f"situation.turns[0].content: {kind}"


def test_invalid_and_advertising_ssns_pass() -> None:
    assert residual_pii([_case("ref 000-12-3456, 987-65-4320 and 123-00-4567")]) == []
