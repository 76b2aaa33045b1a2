"""Names after cues: the gazetteer's sources, titles as written, kanji iteration marks, `from`."""

from __future__ import annotations

import pytest

from casework.privacy.names import NameDetector, first_names


def _names(text: str, detector: NameDetector | None = None) -> list[str]:
    found = (detector or NameDetector()).find(text)
    return [text[d.start : d.end] for d in found]


def test_the_gazetteer_comes_from_public_domain_us_records_only() -> None:
    from importlib import resources

    text = resources.files("casework.privacy").joinpath("first_names.txt").read_text("utf-8")
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert any("1990 US Census" in line for line in header), header
    assert any("SSA" in line for line in header), header
    assert "names-dataset" not in text
    assert {"jennifer", "maria", "wolfgang", "priya", "giuseppe"} <= first_names()
    # Ordinary words that are also names are left out: they start sentences.
    assert not {"will", "may", "grace", "bill"} & first_names()


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Cheers,\nDipl.-Ing. Helmut Weller", "Helmut Weller"),
        ("Hi, I'm Srta. Julia Alves and my order never arrived.", "Julia Alves"),
        ("Kind regards,\nDra. Gabriela Ribeiro", "Gabriela Ribeiro"),
        ("I'm Ind. Wendy Rogers", "Wendy Rogers"),
        ("I'm 佐々木 和也", "佐々木 和也"),
    ],
)
def test_titles_as_written_and_kanji_iteration_marks(text: str, name: str) -> None:
    assert _names(text) == [name]


def test_a_lone_unknown_word_introducing_its_writer_is_a_name() -> None:
    unknown = NameDetector(frozenset())
    assert _names("Hello, this is Gerlinde from the billing team.", unknown) == ["Gerlinde"]
    assert _names("hi, I'm Dakshesh from Pune", unknown) == ["Dakshesh"]


@pytest.mark.parametrize(
    "text",
    [
        "this is Everything from the catalogue",
        "I'm Not from here",
        "This is Gerlinde",  # a lone unknown word, no introduction: could be any word
    ],
)
def test_words_that_are_no_names_before_from_stay(text: str) -> None:
    assert _names(text, NameDetector(frozenset())) == []
