r"""Word k-shingles, their stable 64-bit hashes, and exact Jaccard and containment.

Tokenisation: lowercase, then every maximal run of Unicode letters and numbers (``\p{L}``,
``\p{N}``) is a word; everything else separates words. A shingle is ``k`` consecutive words; a
text with fewer than ``k`` (but at least one) words has exactly one shingle, all of its words.
Entry points: :func:`shingle_sets` (a batch, compiled loops over Arrow buffers), :func:`shingles`,
:func:`shingle_hashes`, :func:`jaccard`, :func:`containment`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from casework.shingling import _kernels
from casework.shingling._sets import ShingleSets

DEFAULT_K = 3
"""Words per shingle."""
DEFAULT_SEED = 0
"""Seed of the token hash (xxh64)."""

_MASK = (1 << 64) - 1
_NON_WORD = r"[^\p{L}\p{N}]+"


def _coefficient(position: int) -> int:
    """Odd multiplier of the ``position``-th word of a shingle (golden-ratio sequence)."""
    return ((0x9E3779B97F4A7C15 * (2 * position + 1)) & _MASK) | 1


_LENGTH_COEFFICIENT = 0xD6E8FEB86659FD93


def _fmix64(x: int) -> int:
    """MurmurHash3's 64-bit finaliser (a bijection that spreads every input bit)."""
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & _MASK
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & _MASK
    x ^= x >> 33
    return x


def shingle_hash(words: Sequence[str], seed: int = DEFAULT_SEED) -> int:
    """Stable 64-bit hash of one shingle (its words in order); the reference for the batch path.

    Each word is hashed with ``xxh64(word_utf8, seed)``; the word hashes are combined as
    ``fmix64(len * L + sum(h_i * C_i)) mod 2**64`` with fixed odd constants, so the value never
    depends on the process (unlike Python's salted ``hash``) and word order matters.

    >>> shingle_hash(["where", "is", "my"]) == shingle_hash(["where", "is", "my"])
    True
    """
    acc = (len(words) * _LENGTH_COEFFICIENT) & _MASK
    for i, word in enumerate(words):
        acc = (acc + xxhash.xxh64_intdigest(word.encode("utf-8"), seed) * _coefficient(i)) & _MASK
    return _fmix64(acc)


@dataclass(frozen=True)
class Tokens:
    """Words of a batch of texts: row ``i`` is ``words[offsets[i]:offsets[i + 1]]``."""

    words: pa.LargeStringArray
    """All words, row after row."""
    offsets: npt.NDArray[np.int64]
    """Row boundaries into ``words`` (length rows + 1)."""

    def row(self, i: int) -> list[str]:
        """Words of row ``i``."""
        return [str(w) for w in self.words[self.offsets[i] : self.offsets[i + 1]].to_pylist()]


# Byte classes for the ASCII fast path: 0 separates words, anything else is kept (A-Z lowered).
# Bytes >= 0x80 only occur in rows already normalised by the Unicode regex, where every remaining
# non-ASCII byte belongs to a letter or a number.
_LUT = np.zeros(256, dtype=np.uint8)
for _b in range(256):
    if ord("a") <= _b <= ord("z") or ord("0") <= _b <= ord("9") or _b >= 0x80:
        _LUT[_b] = _b
    elif ord("A") <= _b <= ord("Z"):
        _LUT[_b] = _b + 32


def _as_large_strings(texts: Sequence[str] | pa.Array | pa.ChunkedArray) -> pa.LargeStringArray:
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if not isinstance(texts, pa.Array):
        texts = pa.array(list(texts), type=pa.large_string())
    arr = pc.fill_null(texts.cast(pa.large_string()), "")
    not_ascii = pc.invert(pc.string_is_ascii(arr))
    if pc.any(not_ascii).as_py():
        lowered = pc.replace_substring_regex(pc.utf8_lower(arr.filter(not_ascii)), _NON_WORD, " ")
        arr = pc.replace_with_mask(arr, not_ascii, lowered)
    # A fresh, unsliced copy so the raw buffers start at row 0.
    return pa.concat_arrays([arr]) if arr.offset else arr


def tokenize_batch(texts: Sequence[str] | pa.Array | pa.ChunkedArray) -> Tokens:
    r"""Words of every text, without a Python loop over texts or words.

    ASCII rows are tokenised on the raw UTF-8 bytes with a lookup table, in a compiled loop; rows
    holding any non-ASCII character are first lowered and normalised with a Unicode regex
    (``\p{L}\p{N}``), which gives the same words the lookup table would give on ASCII.
    """
    arr = _as_large_strings(texts)
    n = len(arr)
    offs = np.frombuffer(arr.buffers()[1], dtype=np.int64)[: n + 1]
    data_buf = arr.buffers()[2]
    base = int(offs[0]) if n else 0
    data = (
        np.frombuffer(data_buf, dtype=np.uint8)[base : int(offs[-1])]
        if data_buf is not None and n
        else np.zeros(0, dtype=np.uint8)
    )
    rel = offs - base
    counts = np.zeros(2, dtype=np.int64)
    _kernels.word_counts(data, rel, _LUT, counts)
    chars = np.empty(int(counts[0]), dtype=np.uint8)
    word_offsets = np.empty(int(counts[1]) + 1, dtype=np.int64)
    offsets = np.empty(len(rel), dtype=np.int64)
    # The second pass finds the words again, cut at row ends, and copies their lowered bytes.
    _kernels.words(data, rel, _LUT, chars, word_offsets, offsets)
    words = pa.LargeStringArray.from_buffers(
        int(counts[1]), pa.py_buffer(word_offsets), pa.py_buffer(chars)
    )
    return Tokens(words, offsets)


def tokenize(text: str) -> list[str]:
    """Words of one text (see the module docstring for the rule).

    >>> tokenize("Where's my REFUND?? Order #A-17")
    ['where', 's', 'my', 'refund', 'order', 'a', '17']
    """
    return tokenize_batch([text]).row(0)


def _word_hashes(words: pa.LargeStringArray, seed: int) -> npt.NDArray[np.uint64]:
    """xxh64 of every word, hashing each distinct word once."""
    if len(words) == 0:
        return np.zeros(0, dtype=np.uint64)
    encoded = pc.dictionary_encode(words)
    vocab = encoded.dictionary
    v_offs = np.frombuffer(vocab.buffers()[1], dtype=np.int64)[
        vocab.offset : vocab.offset + len(vocab) + 1
    ]
    v_data = vocab.buffers()[2]
    raw = memoryview(v_data) if v_data is not None else memoryview(b"")
    bounds = v_offs.tolist()
    digest = xxhash.xxh64_intdigest
    vocab_hash = np.fromiter(
        (digest(raw[bounds[i] : bounds[i + 1]], seed) for i in range(len(vocab))),
        dtype=np.uint64,
        count=len(vocab),
    )
    indices = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    hashes: npt.NDArray[np.uint64] = vocab_hash[indices]
    return hashes


def _shingle_rows(tokens: Tokens, k: int, seed: int) -> ShingleSets:
    """Shingle hashes of every row, sorted and without repeats (one compiled pass over words)."""
    word_hash = _word_hashes(tokens.words, seed)
    n_words = np.diff(tokens.offsets)
    room = int(np.maximum(n_words - k + 1, np.minimum(n_words, 1)).sum())
    hashes = np.empty(room, dtype=np.uint64)
    offsets = np.empty(len(tokens.offsets), dtype=np.int64)
    coefficients = np.array([_coefficient(i) for i in range(k)], dtype=np.uint64)
    _kernels.shingle_rows(
        word_hash,
        tokens.offsets,
        k,
        coefficients,
        np.uint64(_LENGTH_COEFFICIENT),
        hashes,
        offsets,
    )
    return ShingleSets(hashes[: offsets[-1]], offsets)


def shingle_sets(
    texts: Sequence[str] | pa.Array | pa.ChunkedArray,
    k: int = DEFAULT_K,
    seed: int = DEFAULT_SEED,
) -> ShingleSets:
    """Hashed shingle sets of a batch of texts (compiled loops; the path every engine uses).

    Row ``i`` equals ``sorted(shingle_hashes(texts[i], k, seed))``.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1. Got {k}.")
    return _shingle_rows(tokenize_batch(texts), k, seed)


def shingles(text: str, k: int = DEFAULT_K) -> set[str]:
    """The shingles of ``text`` as strings of space-joined words.

    >>> sorted(shingles("Where is my refund?"))
    ['is my refund', 'where is my']
    """
    words = tokenize(text)
    if not words:
        return set()
    if len(words) < k:
        return {" ".join(words)}
    return {" ".join(words[i : i + k]) for i in range(len(words) - k + 1)}


def shingle_hashes(text: str, k: int = DEFAULT_K, seed: int = DEFAULT_SEED) -> set[int]:
    """The hashed shingles of ``text`` (pure-Python reference of :func:`shingle_sets`)."""
    return {shingle_hash(s.split(" "), seed) for s in shingles(text, k)}


def jaccard(
    a: Collection[object] | Iterable[object], b: Collection[object] | Iterable[object]
) -> float:
    """Jaccard similarity ``|A ∩ B| / |A ∪ B|`` of two sets; 0.0 when both are empty.

    Two empty texts share nothing a reviewer could act on, so they score 0, not 1.
    Source: Broder, "On the resemblance and containment of documents" (1997), which defines
    resemblance this way; Leskovec, Rajaraman & Ullman, *Mining of Massive Datasets*, Example 3.1:
    three shared elements out of eight in the union give 3/8.

    >>> jaccard({"a", "b", "c", "d", "e"}, {"c", "d", "e", "f", "g", "h"})
    0.375
    """
    sa, sb = set(a), set(b)
    union = len(sa | sb)
    return len(sa & sb) / union if union else 0.0


def containment(
    a: Collection[object] | Iterable[object], b: Collection[object] | Iterable[object]
) -> float:
    """Containment of ``A`` in ``B``: ``|A ∩ B| / |A|``; 0.0 when ``A`` is empty.

    Source: Broder (1997), which defines the containment of A in B this way. Not symmetric: a
    short row copied into a long prompt is fully contained in it while their Jaccard stays small.

    >>> containment({"a b", "b c"}, {"a b", "b c", "c d", "d e"})
    1.0
    """
    sa = set(a)
    return len(sa & set(b)) / len(sa) if sa else 0.0
