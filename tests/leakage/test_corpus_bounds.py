"""Compressed corpora inflate within bounds: a bomb or an endless line is refused, located."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest
import zstandard

from casework.decompress import DecompressionLimits
from casework.errors import InputError
from casework.leakage.reading import iter_documents


def _documents(path: Path, limits: DecompressionLimits | None = None) -> list[str]:
    return [t for _, texts in iter_documents(str(path), limits=limits) for t in texts]


@pytest.mark.parametrize("suffix", [".txt.gz", ".jsonl.zst"])
def test_a_compressed_corpus_bomb_is_refused_by_its_ratio(tmp_path: Path, suffix: str) -> None:
    payload = b"a" * (64 << 20)  # one endless line: 64 MiB from a few KiB
    path = tmp_path / f"bomb{suffix}"
    if suffix.endswith(".gz"):
        path.write_bytes(gzip.compress(payload))
    else:
        path.write_bytes(zstandard.ZstdCompressor().compress(payload))
    with pytest.raises(InputError) as caught:
        _documents(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: inflates more than 200 times"), message
    assert "CASEWORK_MAX_COMPRESSION_RATIO=1000" in message


def test_a_line_past_the_bound_is_refused_compressed_or_not(tmp_path: Path) -> None:
    line = "".join(random.Random(7).choice("abcdefgh ") for _ in range(300_000))
    plain = tmp_path / "long.txt"
    plain.write_text(f"short\n{line}\n", encoding="utf-8")
    small = DecompressionLimits(max_bytes=100_000)
    with pytest.raises(InputError, match=r"holds a line longer than 97\.66 KiB"):
        _documents(plain, small)
    assert len(_documents(plain)) == 2


def test_a_corpus_larger_than_the_bound_streams_line_by_line(tmp_path: Path) -> None:
    rng = random.Random(3)
    lines = ["".join(rng.choice("abcdefghij ") for _ in range(200)) for _ in range(2_000)]
    path = tmp_path / "part.txt.gz"
    path.write_bytes(gzip.compress("\r\n".join(lines).encode()))
    docs = _documents(path, DecompressionLimits(max_bytes=64 << 10))  # 400 KB in all
    assert docs == lines


def test_invalid_utf8_names_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "part.txt"
    path.write_bytes(b"one\ntwo\nth\xffree\nfour\n")
    with pytest.raises(InputError, match=r"part\.txt:3: invalid UTF-8 on this line"):
        _documents(path)
