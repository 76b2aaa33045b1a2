from __future__ import annotations

import doctest
import importlib
import os
import random
import subprocess
import sys

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casework.shingling import _kernels, containment, jaccard, shingles, tokenize
from casework.shingling._sets import ShingleSets, sort_unique_segments
from casework.shingling._shingles import (
    _LENGTH_COEFFICIENT,
    _LUT,
    Tokens,
    _as_large_strings,
    _coefficient,
    _word_hashes,
    shingle_hash,
    shingle_hashes,
    shingle_sets,
    tokenize_batch,
)

MODULES = [
    "casework.shingling._shingles",
    "casework.leakage.lsh",
    "casework.leakage.join",
    "casework.leakage.prompt",
    "casework.leakage.embed",
]

words = st.text(alphabet="abcdefghij", min_size=1, max_size=4)
texts = st.lists(words, min_size=0, max_size=12).map(" ".join)
unicode_texts = st.text(alphabet=st.characters(codec="utf-8", max_codepoint=0x2FFF), max_size=40)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0
    assert result.failed == 0


def test_tokenize_rule() -> None:
    assert tokenize("Where's my REFUND?? Order #A-17") == [
        "where",
        "s",
        "my",
        "refund",
        "order",
        "a",
        "17",
    ]
    assert tokenize("Héllo, WÖRLD!! x_y £5") == ["héllo", "wörld", "x", "y", "5"]
    assert tokenize("") == []
    assert tokenize(" \n\t ...") == []


def test_words_never_cross_rows() -> None:
    batch = tokenize_batch(["abc", "def", "", "g h", "£5 Ünïcode"])
    assert [batch.row(i) for i in range(5)] == [["abc"], ["def"], [], ["g", "h"], ["5", "ünïcode"]]


def test_short_text_is_one_shingle() -> None:
    assert shingles("refund please") == {"refund please"}
    assert shingles("") == set()
    assert shingles("a b c d") == {"a b c", "b c d"}


def test_hash_is_stable_across_processes_and_versions() -> None:
    # A changed value would silently invalidate stored suppression decisions and benchmarks.
    assert shingle_hash(["where", "is", "my"]) == shingle_hash(["where", "is", "my"], seed=0)
    assert shingle_hash(["where", "is", "my"]) != shingle_hash(["my", "is", "where"])
    assert shingle_hash(["where", "is", "my"], seed=1) != shingle_hash(
        ["where", "is", "my"], seed=0
    )
    # Pinned value: stored flags and suppression hashes depend on it never changing.
    assert shingle_hash(["where", "is", "my"]) == 8210848008898461837
    code = "from casework.shingling._shingles import shingle_hash; print(shingle_hash(['where', 'is', 'my']))"
    other = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONHASHSEED": "12345"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert int(other.stdout) == shingle_hash(["where", "is", "my"])


@settings(max_examples=150, deadline=None)
@given(st.lists(unicode_texts, max_size=6), st.integers(1, 4))
def test_batch_equals_scalar_reference(batch: list[str], k: int) -> None:
    sets = shingle_sets(batch, k)
    assert len(sets) == len(batch)
    for i, text in enumerate(batch):
        assert sets.row(i).tolist() == sorted(shingle_hashes(text, k))


@settings(max_examples=100, deadline=None)
@given(st.lists(unicode_texts, max_size=6))
def test_ascii_fast_path_equals_unicode_regex_path(batch: list[str]) -> None:
    fast = tokenize_batch(batch)
    regex = pc.replace_substring_regex(
        pc.utf8_lower(pa.array(batch, pa.large_string())), r"[^\p{L}\p{N}]+", " "
    )
    for i, text in enumerate(regex.to_pylist()):
        assert fast.row(i) == text.split()


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=40))
def test_case_insensitive_on_ascii(text: str) -> None:
    assert shingles(text.upper()) == shingles(text.lower())


@settings(max_examples=200, deadline=None)
@given(texts, texts)
def test_jaccard_and_containment_properties(a_text: str, b_text: str) -> None:
    a, b = shingles(a_text), shingles(b_text)
    j = jaccard(a, b)
    assert j == jaccard(b, a)
    assert 0.0 <= j <= 1.0
    if a:
        assert jaccard(a, a) == 1.0
        assert containment(a, a) == 1.0
        assert j <= containment(a, b)
        assert containment(a, a | b) == 1.0
    assert (j == 1.0) == (bool(a) and a == b)
    # Hashing keeps the measures (no collisions at this size).
    assert jaccard(shingle_hashes(a_text), shingle_hashes(b_text)) == pytest.approx(j)


def test_empty_sets_score_zero() -> None:
    assert jaccard(set(), set()) == 0.0
    assert containment(set(), {"a b c"}) == 0.0


def test_invalid_k() -> None:
    with pytest.raises(ValueError, match=r"k must be at least 1\. Got 0\."):
        shingle_sets(["a"], 0)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.integers(0, 50), max_size=12), max_size=8))
def test_sort_unique_segments(rows: list[list[int]]) -> None:
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=offsets[1:])
    flat = np.array([v for r in rows for v in r], dtype=np.uint64)
    values, new_offsets = sort_unique_segments(flat, offsets)
    got = ShingleSets(values, new_offsets)
    assert [got.row(i).tolist() for i in range(len(rows))] == [sorted(set(r)) for r in rows]


def test_chunked_arrow_input() -> None:
    chunked = pa.chunked_array([["where is my refund"], ["hi there"]])
    assert shingle_sets(chunked).row(1).tolist() == sorted(shingle_hashes("hi there"))
    sliced = pa.array(["x y z", "where is my refund", "b"]).slice(1, 2)
    assert shingle_sets(sliced).row(0).tolist() == sorted(shingle_hashes("where is my refund"))


def _numpy_words(data: npt.NDArray[np.uint8], rel: npt.NDArray[np.int64]) -> Tokens:
    """The words of a batch's bytes as numpy found them before the compiled loop (the oracle)."""
    mapped = _LUT[data]
    keep = mapped != 0
    steps = np.diff(keep.view(np.int8))
    changes = np.flatnonzero(steps)
    rising = steps[changes] == 1
    starts = changes[rising] + 1
    ends = changes[~rising] + 1
    if len(keep) and keep[0]:
        starts = np.concatenate([np.zeros(1, dtype=np.int64), starts])
    if len(keep) and keep[-1]:
        ends = np.concatenate([ends, np.array([len(keep)], dtype=np.int64)])
    inner = np.unique(rel[1:-1])
    inner = inner[(inner > 0) & (inner < len(keep))]
    joined = inner[keep[inner] & keep[inner - 1]]
    if len(joined):
        starts = np.sort(np.concatenate([starts, joined]), kind="stable")
        ends = np.sort(np.concatenate([ends, joined]), kind="stable")
    word_offsets = np.zeros(len(starts) + 1, dtype=np.int64)
    np.cumsum(ends - starts, out=word_offsets[1:])
    words = pa.LargeStringArray.from_buffers(
        len(starts), pa.py_buffer(word_offsets), pa.py_buffer(mapped[keep].tobytes())
    )
    return Tokens(words, np.searchsorted(starts, rel, side="left").astype(np.int64))


def _bytes_of(texts: list[str]) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    encoded = [t.encode("utf-8") for t in texts]
    rel = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=rel[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), rel


def _seeded_texts(seed: int, n: int) -> list[str]:
    """Rows that start and end inside words (so words meet at row cuts), empty rows, rows of
    separators only, upper case and non-ASCII letters."""
    rng = random.Random(seed)
    alphabet = "abcXYZ09 .,-_\n\t!é£Ü"
    rows = ["", " ", "...", "a", "Z", "ab", "é", "£"]
    rows += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 60))) for _ in range(n)]
    return rows


def test_compiled_words_equal_the_numpy_words() -> None:
    texts = _seeded_texts(3, 2000)
    found = tokenize_batch(texts)
    # The kernel sees the bytes after normalisation: compare both on those.
    normal = _as_large_strings(texts).to_pylist()
    expected = _numpy_words(*_bytes_of(normal))
    assert found.words.equals(expected.words)
    assert found.offsets.tolist() == expected.offsets.tolist()
    assert [found.row(i) for i in range(len(texts))] == [tokenize(t) for t in texts]


def test_python_bodies_of_the_word_kernels_give_the_compiled_words() -> None:
    data, rel = _bytes_of(_as_large_strings(_seeded_texts(4, 200)).to_pylist())
    counts = np.zeros(2, dtype=np.int64)
    _kernels.word_counts.py_func(data, rel, _LUT, counts)
    chars = np.empty(int(counts[0]), dtype=np.uint8)
    word_offsets = np.empty(int(counts[1]) + 1, dtype=np.int64)
    row_words = np.empty(len(rel), dtype=np.int64)
    _kernels.words.py_func(data, rel, _LUT, chars, word_offsets, row_words)
    expected = _numpy_words(data, rel)
    assert chars.tobytes() == "".join(expected.words.to_pylist()).encode()
    sizes = [len(w.encode()) for w in expected.words.to_pylist()]
    assert word_offsets.tolist() == np.cumsum([0, *sizes]).tolist()
    assert row_words.tolist() == expected.offsets.tolist()
    # No rows at all: nothing is written past the arrays.
    empty = np.zeros(0, dtype=np.int64)
    _kernels.words.py_func(data[:0], empty, _LUT, chars[:0], word_offsets[:1], empty)


def _numpy_shingle_sets(tokens: Tokens, k: int, seed: int = 0) -> ShingleSets:
    """Shingle hashes as numpy made them before the compiled loop (the oracle): every k-word
    window at once, then the rows sorted and de-duplicated by ``sort_unique_segments``."""
    word_hash = _word_hashes(tokens.words, seed)
    n_words = np.diff(tokens.offsets)
    n_full = np.maximum(n_words - k + 1, 0)
    short = (n_words > 0) & (n_words < k)
    per_row = np.where(short, 1, n_full)
    offsets = np.zeros(len(n_words) + 1, dtype=np.int64)
    np.cumsum(per_row, out=offsets[1:])
    total = len(word_hash)
    padded = np.concatenate([word_hash, np.zeros(k, dtype=np.uint64)])
    full = np.full(total, (k * _LENGTH_COEFFICIENT) % 2**64, dtype=np.uint64)
    for i in range(k):
        full += padded[i : i + total] * np.uint64(_coefficient(i))
    valid = np.ones(total, dtype=bool)
    full_rows = n_words >= k
    for i in range(1, k):
        valid[tokens.offsets[1:][full_rows] - i] = False
    valid[np.repeat(short, n_words)] = False
    acc = np.empty(int(offsets[-1]), dtype=np.uint64)
    acc[np.repeat(~short, per_row)] = full[valid]
    short_rows = np.flatnonzero(short)
    short_len = n_words[short_rows]
    value = short_len.astype(np.uint64) * np.uint64(_LENGTH_COEFFICIENT)
    for i in range(k - 1):
        has = short_len > i
        start = tokens.offsets[:-1][short_rows[has]] + i
        value[has] += word_hash[start] * np.uint64(_coefficient(i))
    acc[offsets[short_rows]] = value
    mixed = acc ^ (acc >> np.uint64(33))
    mixed *= np.uint64(0xFF51AFD7ED558CCD)
    mixed ^= mixed >> np.uint64(33)
    mixed *= np.uint64(0xC4CEB9FE1A85EC53)
    mixed ^= mixed >> np.uint64(33)
    return ShingleSets(*sort_unique_segments(mixed, offsets))


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_compiled_shingle_rows_equal_the_numpy_rows(k: int) -> None:
    # Rows with no words, fewer words than k, and repeated shingles ("x y x y ...").
    texts = [*_seeded_texts(5, 1500), "x y x y x y x y", "a a a a a a", "one two"]
    expected = _numpy_shingle_sets(tokenize_batch(texts), k)
    found = shingle_sets(texts, k)
    assert found.offsets.tolist() == expected.offsets.tolist()
    assert found.hashes.tolist() == expected.hashes.tolist()
    assert len(found.row(len(texts) - 3)) == 2  # its windows alternate between two shingles


def test_python_body_of_the_shingle_kernel_gives_the_compiled_rows() -> None:
    texts = [*_seeded_texts(6, 100), "x y x y x y"]
    tokens = tokenize_batch(texts)
    word_hash = _word_hashes(tokens.words, 0)
    expected = shingle_sets(texts, 3)
    hashes = np.empty(len(word_hash) + len(texts), dtype=np.uint64)
    offsets = np.empty(len(texts) + 1, dtype=np.int64)
    coefficients = np.array([_coefficient(i) for i in range(3)], dtype=np.uint64)
    with np.errstate(over="ignore"):  # numpy scalars warn where the 64-bit product wraps
        _kernels.shingle_rows.py_func(
            word_hash,
            tokens.offsets,
            3,
            coefficients,
            np.uint64(_LENGTH_COEFFICIENT),
            hashes,
            offsets,
        )
    assert offsets.tolist() == expected.offsets.tolist()
    assert hashes[: offsets[-1]].tolist() == expected.hashes.tolist()
