"""Inspect `.eval` zips are inflated within bounds: a decompression bomb is refused, located."""

from __future__ import annotations

import io
import json
import struct
import tracemalloc
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
import zstandard
from click.testing import Result

from casework.decompress import DecompressionLimits
from casework.errors import InputError, UsageError
from casework.interop.run_import import read_results

Run = Callable[..., Result]
DATA = Path(__file__).parent / "data"
_ZSTD = 93


def sample(name: str, pad: bytes = b"") -> bytes:
    """An Inspect sample entry, valid JSON, with ``pad`` inside a string (a bomb's payload)."""
    head = json.dumps({"id": name, "epoch": 1, "scores": {"includes": {"value": "C"}}})
    return head[:-1].encode() + b', "pad": "' + pad + b'"}'


def deflate_eval(members: Mapping[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def zstd_eval(members: Mapping[str, bytes], declared: int = 100) -> bytes:
    """A zip whose entries hold zstd bytes (method 93), as Inspect writes them.

    Python's zipfile cannot write method 93: the entries are stored, then their headers say zstd
    (and claim ``declared`` bytes uncompressed, a size a bomb would lie about).
    """
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    out = bytearray(buffer.getvalue())
    for signature, method_at, size_at in ((b"PK\x03\x04", 8, 22), (b"PK\x01\x02", 10, 24)):
        at = out.find(signature)
        while at >= 0:
            struct.pack_into("<H", out, at + method_at, _ZSTD)
            struct.pack_into("<I", out, at + size_at, declared)
            at = out.find(signature, at + 4)
    return bytes(out)


def zstd_frames(*parts: bytes) -> bytes:
    return b"".join(zstandard.ZstdCompressor(level=3).compress(p) for p in parts)


HEADER = json.dumps({"eval": {"model": "mock"}}).encode()
PAD = b"a" * (40 << 20)  # 40 MiB of one letter: deflate and zstd shrink it over 1000 times


def _write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "bomb.eval"
    path.write_bytes(data)
    return path


def test_a_deflate_zip_bomb_is_refused_by_its_ratio(tmp_path: Path) -> None:
    data = deflate_eval({"header.json": HEADER, "samples/r-1.json": sample("r-1", PAD)})
    assert len(data) < 100_000
    path = _write(tmp_path, data)
    with pytest.raises(InputError) as caught:
        read_results(path, "inspect", shown="bomb.eval")
    message = str(caught.value)
    assert message.startswith("bomb.eval!samples/r-1.json: inflates more than 200 times")
    assert "a decompression bomb?" in message
    assert "raise the bound with CASEWORK_MAX_COMPRESSION_RATIO=1000" in message


def test_a_zstd_bomb_is_refused_by_its_ratio(tmp_path: Path) -> None:
    members = {
        "header.json": zstd_frames(HEADER),
        "samples/r-1.json": zstd_frames(sample("r-1", PAD)),
    }
    path = _write(tmp_path, zstd_eval(members))
    with pytest.raises(InputError, match=r"^bomb\.eval!samples/r-1\.json: inflates more than 200"):
        read_results(path, "inspect", shown="bomb.eval")


def test_a_zstd_bomb_of_gigabytes_is_stopped_while_it_inflates(tmp_path: Path) -> None:
    """4 GiB of frames, each claiming 100 bytes: refused having held a few MiB, not gigabytes."""
    start, block, end = sample("r-1").split(b'"pad": "')[0] + b'"pad": "', b"a" * (64 << 20), b'"}'
    frame = zstd_frames(block)
    member = zstd_frames(start) + frame * 64 + zstd_frames(end)
    path = _write(
        tmp_path, zstd_eval({"header.json": zstd_frames(HEADER), "samples/r-1.json": member})
    )
    # A ratio this loose lets the whole-file bound stop it: each bound works alone.
    limits = DecompressionLimits(max_bytes=32 << 20, max_ratio=1e9)
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match="decompresses to more than 32 MiB"):
            read_results(path, "inspect", shown="bomb.eval", limits=limits)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 80 << 20, peak


def test_the_whole_file_bound_counts_every_member(tmp_path: Path) -> None:
    log = DATA / "inspect" / "refunds.eval"  # eleven entries, 46 KiB inflated in all
    small = DecompressionLimits(max_bytes=20_000)
    with pytest.raises(InputError, match=r"decompresses to more than 19\.53 KiB"):
        read_results(log, "inspect", shown="refunds.eval", limits=small)
    assert len(read_results(log, "inspect", limits=DecompressionLimits()).trials) == 6


def test_the_bounds_are_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    log = DATA / "inspect" / "refunds-deflate.eval"
    monkeypatch.setenv("CASEWORK_MAX_DECOMPRESSED", "10K")
    with pytest.raises(InputError, match="CASEWORK_MAX_DECOMPRESSED=2G"):
        read_results(log, "inspect")
    monkeypatch.setenv("CASEWORK_MAX_DECOMPRESSED", "1M")
    assert len(read_results(log, "inspect").trials) == 6
    monkeypatch.setenv("CASEWORK_MAX_COMPRESSION_RATIO", "lots")
    with pytest.raises(UsageError, match="CASEWORK_MAX_COMPRESSION_RATIO: expected a number"):
        read_results(log, "inspect")


@pytest.mark.parametrize("value", ["", "0", "-5", "12Q", "nan"])
def test_a_bad_size_in_the_environment_is_a_usage_error(value: str) -> None:
    with pytest.raises(UsageError, match="CASEWORK_MAX_DECOMPRESSED: expected a size"):
        DecompressionLimits.from_env({"CASEWORK_MAX_DECOMPRESSED": value})


def test_import_run_of_a_bomb_exits_1_and_writes_nothing(project_dir: Path, run_cli: Run) -> None:
    data = deflate_eval({"header.json": HEADER, "samples/r-1.json": sample("r-1", PAD)})
    (project_dir / "bomb.eval").write_bytes(data)
    before = sorted(p for p in project_dir.rglob("*") if ".git" not in p.parts)
    result = run_cli("import", "run", "bomb.eval", "--results-format", "inspect")
    assert result.exit_code == 1
    assert "bomb.eval!samples/r-1.json: inflates more than 200 times" in result.stderr
    assert "Traceback" not in result.stderr
    after = sorted(p for p in project_dir.rglob("*") if ".git" not in p.parts)
    assert [p for p in after if p not in before and ".casework" not in p.parts] == []
