"""Names after cues: the gazetteer's sources, titles as written, kanji iteration marks, `from`."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casework.privacy import names
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


#: Dashes, spaces, name words, plain words and characters that fold oddly, but no cue's words
#: save `Thanks` and `am` (which take the whole pattern's path).
_PIECES = [
    "—", "–", "--", "-", " ", "\t", "\n", "Ada", "Lovelace", "van", "der", "Dr.", "dr", "why",
    "no", "reply", "I", "İ", "ıd", "0121 234", "Gerlinde", "from", "the", "x—y", "sent it", ",",
    ".", "'", "’", "李", "Ünal", "Thanks", "am",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14))
def test_a_text_whose_only_cue_can_be_a_dash_reads_what_the_whole_cue_pattern_reads(
    pieces: list[str],
) -> None:
    # Without any cue's words, `find` reads only the dash cues: the same names as the whole
    # pattern of cues, which it runs when the words' hint is forced to match.
    text = "".join(pieces)
    detector = NameDetector()
    fast = list(detector.find(text))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(names, "_WORD_CUE_HINT", re.compile(""))
        assert list(detector.find(text)) == fast, text


def test_a_dash_cue_is_read_without_the_whole_cue_pattern(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(names, "_CUE", None)  # any use of it would fail
    text = "I already sent it to support twice — Ada Lovelace — why no reply?"
    assert _names(text) == ["Ada Lovelace"]
    assert _names("sent it twice – 0121 234 4390 – why no reply?") == []
