"""JSONL files of records: strict reading with located errors, canonical atomic writing.

Reading reports every bad line (capped) as ``path:line: field: problem. Got …``; writing produces
the canonical form (UTF-8, one record per line, stable key order, trailing newline) so that git
diffs stay minimal.

Files are read as streams of lines (:func:`file_lines`, :func:`byte_lines`), each decoded by
orjson when it certainly agrees with the strict decoder of :mod:`casework.decoding`
(:func:`fast_object`), by the strict decoder otherwise, and validated once
(:func:`iter_records`).
"""

from __future__ import annotations

import gc
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Generic, TypeVar

import msgspec
import orjson
from pydantic import BaseModel, ValidationError

from casework.atomic import atomic_write_bytes
from casework.decoding import MAX_DEPTH, BadJSON, parse_json
from casework.errors import MAX_REPORTED, InputErrors, Problem

if TYPE_CHECKING:  # the case model loads with the first case read (not for `dataset versions`)
    from casework.schema import Case

__all__ = [
    "Lines",
    "byte_lines",
    "canonical_bytes",
    "canonical_fix",
    "canonical_line",
    "canonical_records",
    "collect_records",
    "collector_paused",
    "dump_record",
    "fast_canonical",
    "fast_object",
    "file_lines",
    "iter_records",
    "json_object_lines",
    "json_objects",
    "nesting_depth",
    "parse_records",
    "problems_from_validation",
    "read_cases",
    "read_records",
    "valid_record",
    "write_cases",
    "write_records",
]

M = TypeVar("M", bound=BaseModel)

_PYDANTIC_MESSAGES = {
    "extra_forbidden": "unknown field",
    "missing": "field required",
}


def problems_from_validation(
    exc: ValidationError, path: str, line: int | None, prefix: str = ""
) -> list[Problem]:
    """Turn a pydantic ``ValidationError`` into located problems, one per error."""
    out = []
    for err in exc.errors(include_url=False):
        loc = [str(p) for p in err["loc"] if not str(p).startswith("function-")]
        field = ".".join(([prefix] if prefix else []) + loc) or None
        message = _PYDANTIC_MESSAGES.get(err["type"], err["msg"])
        if message.startswith("Value error, "):
            message = message[len("Value error, ") :]
        has_got = err["type"] != "missing"
        out.append(Problem(path, line, field, message, err.get("input"), has_got=has_got))
    return out


@dataclass(frozen=True)
class Lines(Generic[M]):
    """Records read from a JSONL file, with the line each came from."""

    records: list[M]
    line_of: dict[int, int]

    def line(self, index: int) -> int:
        """1-based line number of ``records[index]``."""
        return self.line_of[index]


def read_records(
    path: Path,
    model: type[M],
    *,
    shown: str | None = None,
    key: Callable[[M], str] | None = None,
    key_field: str = "id",
    missing_ok: bool = False,
) -> Lines[M]:
    """Read a JSONL file of ``model`` records, reporting every bad line.

    The file is read as a stream of lines (never whole in memory besides the records).

    Args:
        path: File to read.
        model: Pydantic model of one line.
        shown: How to name the file in messages (default: ``path`` as given).
        key: Unique key of a record; duplicates are errors when given.
        key_field: Field name reported for a duplicate key.
        missing_ok: Return no records (instead of an error) when the file does not exist.

    Raises:
        InputErrors: Any line is bad; see :func:`parse_records`.
    """
    name = shown or str(path)
    if not path.exists():
        if missing_ok:
            return Lines([], {})
        InputErrors.raise_if_any([Problem(name, None, None, "file not found")])
    with path.open("rb") as stream:
        return collect_records(file_lines(stream), model, shown=name, key=key, key_field=key_field)


def byte_lines(data: bytes) -> Iterator[bytes]:
    """The lines of JSONL bytes, each with its newline (the last may lack one), one at a time.

    Unlike ``data.split``, no copy of the whole is made: one line at a time is.
    """
    start, size = 0, len(data)
    while start < size:
        end = data.find(b"\n", start)
        if end < 0:
            yield data[start:]
            return
        yield data[start : end + 1]
        start = end + 1


def file_lines(stream: BinaryIO) -> Iterator[bytes]:
    """The lines of an open binary file, each with its newline, read in bounded buffers."""
    yield from stream


#: Maps every digit to 0 (a run of 19 zeros then marks a number orjson may not read exactly),
#: ``[`` to ``{`` (one count then gives the openers, a bound on nesting) and ``E`` to ``e``
#: (for :func:`_numbers_risky`): one pass serves both checks of a line (:func:`_marked`).
_MARKS = bytes.maketrans(b"123456789[E", b"000000000{e")
_LONG_NUMBER = b"0" * 19
#: For :func:`_numbers_risky`: digits to 0 and ``E`` to ``e``; 17 digits in a row; the end
#: of a number with an exponent (at most three digits in a float's), as pydantic writes it.
#: Hex digits in strings (``"order_a3c3bab748ea"``) rarely end so; when one does, the strings
#: are cut out and the check is made again.
_DIGITS_AND_EXPONENT = bytes.maketrans(b"123456789E", b"000000000e")
_SEVENTEEN_DIGITS = b"0" * 17
_EXPONENT_END = re.compile(rb"0e[-+]?0{1,3}[,}\]]")


def _marked(raw: bytes) -> bytes:
    """``raw`` with :data:`_MARKS` applied: what :func:`fast_object` and :func:`_may_be_risky` read."""
    return raw.translate(_MARKS)


def fast_object(raw: bytes) -> dict[str, Any] | None:
    """The JSON object on one line, when orjson certainly reads it as the strict decoder does.

    ``None`` defers the line to :func:`casework.decoding.parse_json` (and its located message):
    whatever orjson refuses (bad UTF-8, `NaN`, a lone surrogate, any syntax error), a line that
    is not an object, a line with 19 digits in a row (orjson reads an integer past 64 bits as a
    float, the standard library exactly), or one with enough brackets to nest past
    :data:`~casework.decoding.MAX_DEPTH` levels that does. Duplicate keys need no check: both
    decoders keep the last value.

    orjson over msgspec: on the example's cases both decode at the same speed to plain Python
    objects (msgspec's edge comes from decoding into its own typed structs, which would duplicate
    the pydantic schema and its messages), and orjson writes bytes that the canonical writer
    turns into today's form cheaply (:func:`canonical_line`).
    """
    return _fast_object_marked(raw, _marked(raw))


def _fast_object_marked(
    raw: bytes, marked: bytes, seventeen: bool | None = None
) -> dict[str, Any] | None:
    """:func:`fast_object` of ``raw``, given ``marked`` (:func:`_marked` of ``raw``).

    ``seventeen``: whether ``marked`` holds :data:`_SEVENTEEN_DIGITS` (``None``: not known).
    """
    # 19 zeros in a row hold 17: most lines have neither, told by one search, not two.
    if seventeen is None:
        seventeen = _SEVENTEEN_DIGITS in marked
    if seventeen and _LONG_NUMBER in marked:
        return None
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if type(obj) is not dict:
        return None
    if marked.count(b"{") > MAX_DEPTH and nesting_depth(raw) > MAX_DEPTH:
        return None
    return obj


#: Every byte but the brackets and quotes of JSON, for :func:`nesting_depth`.
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'{}[]"')
_OPENERS = bytes.maketrans(b"{}[]", b"()()")


def nesting_depth(raw: bytes) -> int:
    """How deeply objects and lists nest in one line of valid JSON (0 for a scalar).

    Computed on bytes in C-speed passes rather than by walking the decoded value: escaped
    backslashes, then escaped quotes, are dropped, then strings, and innermost bracket pairs
    are peeled off once per level.
    """
    if b"\\" in raw:  # most lines hold no escape: two copies of the line saved
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    # A string with no bracket in it is left as `""`: dropping every such pair keeps the
    # parity of the quotes before each bracket, so only strings holding brackets are left to
    # cut out (most lines have none: the split below took a third of this function's time).
    text = raw.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    if b'"' in text:
        text = b"".join(text.split(b'"')[::2])
    brackets = text.translate(_OPENERS)
    depth = 0
    while brackets:
        peeled = brackets.replace(b"()", b"")
        if len(peeled) == len(brackets):  # unbalanced: not valid JSON, never from orjson
            return MAX_DEPTH + 1
        brackets = peeled
        depth += 1
    return depth


def json_objects(
    data: bytes, shown: str, problems: list[Problem], *, blank_lines_ok: bool = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each JSON-object line of JSONL bytes.

    See :func:`json_object_lines` for what is reported instead.
    """
    return json_object_lines(byte_lines(data), shown, problems, blank_lines_ok=blank_lines_ok)


def json_object_lines(
    lines: Iterable[bytes],
    shown: str,
    problems: list[Problem],
    *,
    blank_lines_ok: bool = False,
    start: int = 1,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each JSON-object line (given as read, newline and all).

    Every line that is not one (a BOM, invalid UTF-8, an empty line unless ``blank_lines_ok``,
    invalid JSON, JSON nested too deeply, an over-long integer, `NaN` or `Infinity`, a non-object) is appended to ``problems`` instead, located by line; reading stops
    once far more problems than can be reported have been found. ``start`` is the number of
    the first line given (only line 1 may carry a byte-order mark).
    """
    for number, raw in enumerate(lines, start=start):
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            problems.append(
                Problem(
                    shown, 1, None, "file starts with a UTF-8 byte-order mark; save it without one"
                )
            )
            raw = raw[3:]
            if not raw:  # the mark was all the file held
                return
        if len(problems) > MAX_REPORTED * 4:
            return
        raw = raw.removesuffix(b"\n").removesuffix(b"\r")
        obj = fast_object(raw)
        if obj is None:
            obj = _strict_object(raw, number, shown, problems, blank_lines_ok)
            if obj is None:
                continue
        yield number, obj


def _strict_object(
    raw: bytes, number: int, shown: str, problems: list[Problem], blank_lines_ok: bool
) -> dict[str, Any] | None:
    """The object on one line by the strict decoder, or ``None`` with its problem recorded."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(
            Problem(
                shown,
                number,
                None,
                f"invalid UTF-8 at byte {exc.start + 1}",
                raw[:40],
                has_got=True,
            )
        )
        return None
    if not text.strip():
        if not blank_lines_ok:
            problems.append(
                Problem(shown, number, None, "empty line; every line must hold one record")
            )
        return None
    try:
        obj = parse_json(text)
    except BadJSON as exc:
        problems.append(Problem(shown, number, None, exc.message, text, has_got=True))
        return None
    if not isinstance(obj, dict):
        problems.append(
            Problem(shown, number, None, "line is not a JSON object", obj, has_got=True)
        )
        return None
    return obj


def iter_records(
    lines: Iterable[bytes],
    model: type[M],
    problems: list[Problem],
    *,
    shown: str,
    key: Callable[[M], str] | None = None,
    key_field: str = "id",
    seen: dict[str, int] | None = None,
    start: int = 1,
) -> Iterator[tuple[int, M]]:
    """Yield ``(line number, record)`` for each valid line; bad lines go to ``problems``.

    Each record is validated once, as it streams past; only the keys seen so far are kept
    (to report a duplicate ``key`` with the line of its first occurrence), in ``seen`` when
    given (the caller then has every key and its line afterwards). ``start``: see
    :func:`json_object_lines`.
    """
    if seen is None:
        seen = {}
    for number, obj in json_object_lines(lines, shown, problems, start=start):
        try:
            record = model.model_validate(obj)
        except ValidationError as exc:
            problems.extend(problems_from_validation(exc, shown, number))
            continue
        if key is not None:
            k = key(record)
            if k in seen:
                problems.append(
                    Problem(
                        shown,
                        number,
                        key_field,
                        f"duplicate {key_field}, first on line {seen[k]}",
                        k,
                        has_got=True,
                    )
                )
                continue
            seen[k] = number
        yield number, record


def valid_record(raw: bytes, model: type[M]) -> M | None:
    """The record on one line (given without its newline) when it is valid, else ``None``.

    What :func:`parse_records` accepts of a file holding this line (a byte-order mark is refused
    on any line), without the problem: a caller that takes another path for any bad line (and lets
    that path report it) skips joining its lines into a file and splitting them again, which
    was a third of validating a label.
    """
    found = _valid_marked(raw, model)
    return found[0] if found is not None else None


def _valid_marked(raw: bytes, model: type[M]) -> tuple[M, bytes, bool] | None:
    """:func:`valid_record`, with :func:`_marked` of the line (``raw`` less a final CR).

    And whether that holds :data:`_SEVENTEEN_DIGITS` (both are read again by
    :func:`_may_be_risky`).
    """
    if raw.startswith(b"\xef\xbb\xbf"):  # a byte-order mark: refused wherever it stands
        return None
    line = raw.removesuffix(b"\r")
    marked = line.translate(_MARKS)  # _marked(line), without the call
    seventeen = _SEVENTEEN_DIGITS in marked
    obj = _fast_object_marked(line, marked, seventeen)
    if obj is None:
        obj = _strict_object(line, 2, "", [], False)
        if obj is None:
            return None
    try:
        return model.model_validate(obj), marked, seventeen
    except ValidationError:
        return None


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while records are decoded and validated.

    Records decoded from JSON hold no reference cycles, so each collection would only walk the
    growing heap of live models again: loading 10k of the example's cases took 4.4 s of CPU with
    the collector running and 2.0 s without. Reference counting still frees what is dropped.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def collect_records(
    lines: Iterable[bytes],
    model: type[M],
    *,
    shown: str,
    key: Callable[[M], str] | None = None,
    key_field: str = "id",
) -> Lines[M]:
    """Every record of a stream of JSONL lines; see :func:`parse_records` for the errors."""
    problems: list[Problem] = []
    records: list[M] = []
    line_of: dict[int, int] = {}
    with collector_paused():  # 200k labels: 12.3 s with the collector running, 3.7 s without
        for number, record in iter_records(
            lines, model, problems, shown=shown, key=key, key_field=key_field
        ):
            line_of[len(records)] = number
            records.append(record)
    InputErrors.raise_if_any(problems)
    return Lines(records, line_of)


def parse_records(
    data: bytes,
    model: type[M],
    *,
    shown: str,
    key: Callable[[M], str] | None = None,
    key_field: str = "id",
) -> Lines[M]:
    """Parse JSONL bytes into ``model`` records, reporting every bad line.

    Raises:
        InputErrors: Any line is bad (BOM, invalid UTF-8, empty line, bad JSON, not an object,
            schema violation, duplicate key); all bad lines are listed up to the cap.
    """
    return collect_records(byte_lines(data), model, shown=shown, key=key, key_field=key_field)


def read_cases(path: Path, *, shown: str | None = None, missing_ok: bool = False) -> list[Case]:
    """Read a `cases.jsonl` file; see :func:`read_records` for the errors reported."""
    from casework.schema import Case

    return read_records(path, Case, shown=shown, key=lambda c: c.id, missing_ok=missing_ok).records


def dump_record(record: BaseModel) -> dict[str, Any]:
    """The canonical JSON object of a record: fields in declared order, defaults left out.

    ``schema_version`` is always written, first.
    """
    body = record.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    version = getattr(record, "schema_version", None)
    if version is None:
        return body
    body.pop("schema_version", None)
    return {"schema_version": version, **body}


def _numbers_risky(text: bytes) -> bool:
    """Whether JSON ``text`` may hold a number that pydantic and Python's ``repr`` spell apart.

    That is an exponent (pydantic ``1e-7``, Python ``1e-07``), 17 digits in a row (Python
    writes ``1e+16`` for a float from 1e16 up) or a float below 1e-4 in fixed notation
    (pydantic ``0.00001``, Python ``1e-05``). Looked for in all of ``text`` first, strings
    included, at C speed; only when that finds one are the strings cut out to look again.
    """
    digits = text.translate(_DIGITS_AND_EXPONENT)
    if not (
        _EXPONENT_END.search(digits) is not None
        or _SEVENTEEN_DIGITS in digits
        or b"0.0000" in text  # ":0.0000", ",0.0000", "[0.0000" or "-0.0000" in a number
    ):
        return False
    # Outside strings (escaped backslashes and quotes dropped first, then every other quoted
    # run) only numbers, literals and punctuation are left; `true`/`false` follow no digit.
    bare = text.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = b"".join(bare.split(b'"')[::2])
    digits = structure.translate(_DIGITS_AND_EXPONENT)
    return (
        b"0e" in digits
        or _SEVENTEEN_DIGITS in digits
        or b":0.0000" in structure
        or b",0.0000" in structure
        or b"[0.0000" in structure
        or b"-0.0000" in structure
    )


def _json_int(value: object) -> bytes:
    """``value`` as the standard library writes it (a schema version: an int, one spelling)."""
    return b"%d" % value if type(value) is int else json.dumps(value).encode("utf-8")


def _default_version(model: type[BaseModel]) -> object:
    """The default ``schema_version`` of ``model`` (a sentinel when it has none).

    Kept per model: pydantic's ``model_fields`` lookup took 1.7 us a record, 0.5 s of CPU in a
    first release of 100k cases and 200k labels.
    """
    known = _DEFAULT_VERSIONS.get(model, _UNKNOWN)
    if known is _UNKNOWN:
        field = model.model_fields.get("schema_version")
        known = _NO_DEFAULT if field is None or field.is_required() else field.default
        _DEFAULT_VERSIONS[model] = known
    return known


_NO_DEFAULT = object()
_UNKNOWN = object()
_DEFAULT_VERSIONS: dict[type[BaseModel], object] = {}


def fast_canonical(record: BaseModel) -> bytes | None:
    """:func:`canonical_line` of ``record`` as UTF-8, by pydantic's JSON writer (``None``: unsure).

    pydantic writes compact JSON in Rust; msgspec's formatter re-spaces it (``", "``, ``": "``,
    strings copied as they are) into the standard library's default layout, which is the
    canonical form. The two writers escape every character alike (a test compares them on all
    of Unicode) and write the same content (one serialiser, JSON mode), so they differ only in
    how some floats are spelled; a line holding such a number (:func:`_numbers_risky`) gives
    ``None``, and the caller takes :func:`canonical_line`. At about 5.6 KB a case this costs
    half of :func:`canonical_line`, whose cost is building the Python dump and encoding it.

    Unlike :func:`canonical_line`, a NaN or infinite float comes out as ``null``: compare the
    result with bytes strictly parsed (which cannot hold one there), or check first.
    """
    compact = _compact_json(record)
    if compact is None or _numbers_risky(compact):
        return None
    return _spaced(compact)


def _compact_json(record: BaseModel) -> bytes | None:
    """The compact JSON pydantic writes of ``record``, ``schema_version`` first (``None``: not UTF-8)."""
    version = getattr(record, "schema_version", None)
    to_json = type(record).__pydantic_serializer__.to_json  # bytes, not a str to encode
    try:
        if version is None:
            return to_json(record, by_alias=True, exclude_defaults=True)
        if _default_version(type(record)) == version:
            # Left out as a default: excluding it by name took a third of the writer's time.
            body = to_json(record, by_alias=True, exclude_defaults=True)
        else:
            body = to_json(record, by_alias=True, exclude_defaults=True, exclude={"schema_version"})
    except ValueError:  # a lone surrogate, which UTF-8 cannot hold: the caller's path says so
        return None
    head = b'{"schema_version":' + _json_int(version)
    return head + (b"}" if body == b"{}" else b"," + body[1:])


def _spaced(compact: bytes) -> bytes | None:
    """Compact JSON re-spaced as the standard library writes it (``None``: not JSON)."""
    try:
        return msgspec.json.format(compact, indent=0)
    except msgspec.DecodeError:  # a model that writes NaN as a bare constant (not JSON)
        return None


def canonical_line(record: BaseModel) -> str:
    """One canonical JSONL line (without newline)."""
    # The standard library's C encoder writes the canonical form by definition (", " and ": "
    # separators, float repr, exact big ints). orjson and msgspec write only compact JSON with
    # their own float forms; re-spacing their output outside strings in Python measured 4x
    # slower than this encoder on the example's cases (the cost here is `dump_record`).
    # :func:`fast_canonical` re-spaces pydantic's output in C instead (msgspec), where it can.
    return json.dumps(dump_record(record), ensure_ascii=False)


def _has_non_finite(record: BaseModel) -> bool:
    """Whether any float anywhere in ``record`` is NaN or infinite (fast: no paths kept)."""
    level: list[Any] = [record]
    while level:
        deeper: list[Any] = []
        for node in level:
            if isinstance(node, BaseModel):
                children: Iterable[Any] = node.__dict__.values()
            elif type(node) is dict:
                children = node.values()
            else:
                children = node
            for child in children:
                kind = type(child)
                if kind is float:
                    if not math.isfinite(child):
                        return True
                elif kind is dict or kind is list or kind is tuple or isinstance(child, BaseModel):
                    deeper.append(child)
        level = deeper
    return False


def _non_finite(record: BaseModel) -> str:
    """Dotted path of the first NaN or infinite float in ``record`` (one is known to be there)."""
    stack: list[tuple[str, Any]] = [("", record)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return where
        if isinstance(node, BaseModel):
            stack.extend((f"{where}.{k}".lstrip("."), v) for k, v in node.__dict__.items())
        elif isinstance(node, dict):
            stack.extend((f"{where}.{k}".lstrip("."), v) for k, v in node.items())
        elif isinstance(node, list | tuple):
            stack.extend((f"{where}.{i}".lstrip("."), v) for i, v in enumerate(node))
    return ""


def canonical_bytes(
    records: Iterable[BaseModel], *, sort_key: Callable[[Any], str] | None = None
) -> bytes:
    """Canonical file content: one line per record (sorted by ``sort_key`` if given), trailing newline.

    Raises:
        InputErrors: A record holds NaN or an infinite float, which JSON cannot hold (it would
            otherwise be written as ``null``, silently).
    """
    items: Sequence[BaseModel] = list(records)
    if sort_key is not None:
        items = sorted(items, key=sort_key)
    problems = []
    lines = []
    for record in items:
        line = fast_canonical(record)
        # Walking a case for non-finite floats took about as long as writing it: walk only a
        # record whose JSON could hold one (pydantic writes one as null, NaN or "NaN").
        if (line is None or _may_hold_non_finite(line)) and _has_non_finite(record):
            where = _non_finite(record) or None
            name = f"{type(record).__name__} {getattr(record, 'id', '')}".strip()
            problems.append(
                Problem(name, None, where, "NaN and Infinity are not JSON numbers; not written")
            )
        elif not problems:
            lines.append(line if line is not None else canonical_line(record).encode("utf-8"))
    InputErrors.raise_if_any(problems)
    return b"".join(line + b"\n" for line in lines)


def _may_hold_non_finite(line: bytes) -> bool:
    """Whether pydantic's JSON of a record may hold a NaN or infinity, in any of its modes.

    ``ser_json_inf_nan`` (per model, so nested models may differ) writes one as ``null``
    (the default), as ``NaN``/``Infinity`` or as the strings ``"NaN"``/``"Infinity"``.
    """
    return b"null" in line or b"NaN" in line or b"Infinity" in line


def canonical_fix(record: BaseModel, raw: bytes | memoryview) -> bytes | None:
    """``None`` when ``raw`` is the canonical line of the record parsed from it, else that line.

    A strictly parsed line holds no bare `NaN`/`Infinity`, so a canonical line equal to it holds
    no non-finite float either; any other line takes the full check.

    Raises:
        InputErrors: The record holds NaN or an infinite float (see :func:`canonical_bytes`).
    """
    return _canonical_fix(record, bytes(raw), None)


def _canonical_fix(
    record: BaseModel, raw: bytes, marked: bytes | None, seventeen: bool = True
) -> bytes | None:
    """:func:`canonical_fix`, given :func:`_marked` of ``raw`` when known (``None``: not known).

    ``seventeen``: whether ``marked`` holds :data:`_SEVENTEEN_DIGITS`.

    A line that is pydantic's JSON as re-spaced is canonical unless a number in it may be
    spelt otherwise (:func:`_numbers_risky` of the compact JSON). That check is answered from
    ``marked`` instead, with no second pass over the line, when :func:`_may_be_risky` says no.
    """
    compact = _compact_json(record)
    line = _spaced(compact) if compact is not None else None
    if compact is not None and line is not None:
        if line == raw and marked is not None and not _may_be_risky(raw, marked, seventeen):
            return None
        if _numbers_risky(compact):
            line = None
    if line is None:
        line = canonical_line(record).encode("utf-8")
    if line == raw:
        return None
    # pydantic writes NaN and infinities as `null` (or NaN): a line without one holds neither.
    if _may_hold_non_finite(line) and _has_non_finite(record):
        canonical_bytes([record])  # raises, naming the field
    return line


def _may_be_risky(raw: bytes, marked: bytes, seventeen: bool) -> bool:
    """Whether :func:`_numbers_risky` may hold of the compact JSON that re-spaced is ``raw``.

    The first of its checks, made on ``marked`` (:func:`_marked` of ``raw``) and ``raw``: re-spacing
    adds a space after a comma or colon between values and nothing else, and none of the
    patterns looked for holds a space, nor a comma or colon but as its last byte, nor ``[`` or
    ``{`` (which ``marked`` holds for ``[``); so each is found in ``raw`` exactly when it is in
    the compact JSON. ``False`` proves :func:`_numbers_risky` false. ``seventeen``: whether
    ``marked`` holds :data:`_SEVENTEEN_DIGITS` (found once, by :func:`_valid_marked`).
    """
    return seventeen or _EXPONENT_END.search(marked) is not None or b"0.0000" in raw


def canonical_records(
    lines: Sequence[bytes | memoryview], model: type[M]
) -> list[tuple[M, bytes | None]] | None:
    """Each line's record and :func:`canonical_fix` (its canonical line, ``None`` when it is one).

    ``None`` when any line is not a valid record or holds NaN or an infinite float: a caller
    that takes another path for a bad line lets that path report it.
    """
    # All lines validated, then all written: alternating the two per line measured 7% slower.
    data = [bytes(raw) for raw in lines]
    found = [_valid_marked(raw, model) for raw in data]
    out: list[tuple[M, bytes | None]] = []
    for valid, raw in zip(found, data, strict=True):
        if valid is None:
            return None
        record, marked, seventeen = valid
        try:
            out.append((record, _canonical_fix(record, raw, marked, seventeen)))
        except InputErrors:
            return None
    return out


def write_records(
    path: Path, records: Iterable[BaseModel], *, sort_key: Callable[[Any], str] | None = None
) -> None:
    """Write records in canonical form, atomically."""
    atomic_write_bytes(path, canonical_bytes(records, sort_key=sort_key))


def write_cases(path: Path, cases: Iterable[Case]) -> None:
    """Write `cases.jsonl` in canonical form (sorted by id), atomically."""
    write_records(path, cases, sort_key=lambda c: c.id)
