"""Reading corpora: files, folders and globs (local or fsspec URLs) streamed as document batches.

JSONL, Parquet and plain text, compressed or not. Entry points: :func:`corpus_files`,
:func:`iter_documents`, :func:`file_kind`.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from casework.decoding import BadJSON, parse_json
from casework.decompress import DecompressionLimits, Inflation
from casework.errors import MAX_REPORTED, CaseworkError, InputError, InputErrors, Problem

__all__ = ["DOCS_PER_BATCH", "Reading", "corpus_files", "file_kind", "iter_documents"]

DOCS_PER_BATCH = 2_000
"""Documents scored at a time."""
_TEXT_SUFFIXES = (".txt", ".text", ".md")
_JSON_SUFFIXES = (".jsonl", ".ndjson", ".json")
_COMPRESSION = (".gz", ".bz2", ".xz", ".zst", ".zstd")


def _plain_name(path: str) -> str:
    name = path.lower()
    for suffix in _COMPRESSION:
        name = name.removesuffix(suffix)
    return name


def file_kind(path: str) -> str:
    """`parquet`, `jsonl` or `text`, from the file name (compression suffixes ignored)."""
    name = _plain_name(path)
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(_JSON_SUFFIXES):
        return "jsonl"
    return "text"


def _is_corpus_file(path: str) -> bool:
    """Whether a file found in a folder is part of the corpus (by its extension)."""
    return _plain_name(path).endswith((".parquet", *_JSON_SUFFIXES, *_TEXT_SUFFIXES))


def corpus_files(paths: Sequence[str]) -> list[str]:
    """Files named by ``paths``: files, folders (searched recursively) or globs, local or fsspec URLs.

    Raises:
        InputErrors: A path matches no file.
    """
    from fsspec.core import url_to_fs  # type: ignore[import-untyped]

    out: list[str] = []
    problems = []
    for path in paths:
        fs, root = url_to_fs(path)
        if any(ch in root for ch in "*?["):
            found = sorted(fs.glob(root))
        elif fs.isdir(root):
            found = sorted(f for f in fs.find(root) if _is_corpus_file(f))
        elif fs.exists(root):
            found = [root]
        else:
            found = []
        if not found:
            problems.append(Problem(path, None, None, "no corpus file found"))
            continue
        protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
        out.extend(f if protocol in ("file", "local") else fs.unstrip_protocol(f) for f in found)
    InputErrors.raise_if_any(problems)
    return out


def _text_of(obj: Any, field_name: str) -> str | None:
    if not isinstance(obj, dict):
        return None
    value = obj.get(field_name)
    if isinstance(value, str):
        return value
    messages = obj.get("messages")
    if isinstance(messages, list):
        parts = [m.get("content") for m in messages if isinstance(m, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    pieces = [obj.get(key) for key in ("prompt", "completion")]
    if any(isinstance(p, str) for p in pieces):
        return "\n".join(p for p in pieces if isinstance(p, str))
    return None


@dataclass
class Reading:
    """What reading one file met: documents read, and the lines skipped (capped)."""

    problems: list[Problem] = field(default_factory=list)
    documents: int = 0


def iter_documents(
    path: str,
    *,
    text_field: str = "text",
    batch: int = DOCS_PER_BATCH,
    reading: Reading | None = None,
    limits: DecompressionLimits | None = None,
) -> Iterator[tuple[list[tuple[str, int]], list[str]]]:
    """Stream ``(refs, texts)`` batches from one corpus file (JSONL, Parquet or plain text).

    JSONL documents take ``text_field``, else the contents of ``messages`` (chat fine-tuning
    format), else ``prompt`` and ``completion``. Plain text holds one document per line.
    Unreadable JSONL lines are recorded in ``reading.problems`` and skipped. A compressed file
    inflates within ``limits`` (default: from the environment; see
    :class:`~casework.decompress.DecompressionLimits`), and no line may pass its ``max_bytes``.

    Raises:
        InputError: The file is damaged, not UTF-8, holds a line past the bound, or inflates
            past the ratio bound.
    """
    import fsspec  # type: ignore[import-untyped]

    reading = reading if reading is not None else Reading()
    kind = file_kind(path)
    refs: list[tuple[str, int]] = []
    texts: list[str] = []
    if kind == "parquet":
        try:
            yield from _parquet_documents(path, text_field, batch, reading)
        except CaseworkError:
            raise
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise InputError(path, None, None, f"not a readable Parquet file: {exc}") from None
        return
    number = 0
    opened = fsspec.open(path, "rb", compression="infer")
    inflation = Inflation(path, limits)
    try:
        # A compressed corpus may inflate only so many times its size, and no line past the
        # bound: a decompression bomb is refused as it inflates, one line held at a time.
        compressed = opened.fs.size(opened.path) if opened.compression else None
        with opened as handle:
            for number, raw in enumerate(inflation.lines(handle, compressed, path), start=1):
                line = raw.decode("utf-8").removesuffix("\r")
                text = _line_document(path, kind, number, line, text_field, reading)
                if text is None:
                    continue
                refs.append((path, number))
                texts.append(text)
                reading.documents += 1
                if len(texts) >= batch:
                    yield refs, texts
                    refs, texts = [], []
    except UnicodeDecodeError:
        # Lines are decoded one by one, so the line read last is the bad one.
        raise InputError(
            path, number, None, "invalid UTF-8 on this line; save it as UTF-8"
        ) from None
    except (OSError, EOFError, zlib.error) as exc:  # a damaged compressed corpus
        raise InputError(path, number + 1, None, f"cannot read on from here: {exc}") from None
    if texts:
        yield refs, texts


def _line_document(
    path: str, kind: str, number: int, line: str, text_field: str, reading: Reading
) -> str | None:
    """The document text of one line of a JSONL or text corpus (``None``: skip the line)."""
    if kind != "jsonl":
        text = line.rstrip("\n")
        return text if text.strip() else None
    if not line.strip():
        return None
    try:
        found = _text_of(parse_json(line), text_field)
    except BadJSON as exc:
        if len(reading.problems) < MAX_REPORTED:
            reading.problems.append(
                Problem(path, number, None, exc.message, line.strip(), has_got=True)
            )
        return None
    if found is None and len(reading.problems) < MAX_REPORTED:
        reading.problems.append(
            Problem(path, number, text_field, "no text field, messages, or prompt/completion")
        )
    return found


def _parquet_documents(
    path: str, text_field: str, batch: int, reading: Reading
) -> Iterator[tuple[list[tuple[str, int]], list[str]]]:
    """Batches of the ``text_field`` column of a Parquet corpus."""
    import fsspec
    import pyarrow.parquet as pq

    with fsspec.open(path, "rb") as handle:
        parquet = pq.ParquetFile(handle)
        if text_field not in parquet.schema_arrow.names:
            raise InputErrors(
                [
                    Problem(
                        path,
                        None,
                        text_field,
                        "column not found",
                        parquet.schema_arrow.names,
                        has_got=True,
                    )
                ]
            )
        row = 0
        for record_batch in parquet.iter_batches(batch_size=batch, columns=[text_field]):
            column = record_batch.column(0).to_pylist()
            refs = [(path, row + i + 1) for i in range(len(column))]
            row += len(column)
            reading.documents += len(column)
            yield refs, [v if isinstance(v, str) else "" for v in column]
