"""Decoding the bytes of user files: UTF-8, JSON and TOML, with located errors, never a traceback.

Every reader of a file a user (or a hostile trace exporter) hands casework decodes through these,
so that invalid UTF-8, JSON nested hundreds of levels deep, integers with thousands of digits and
`NaN` / `Infinity` constants become one :class:`~casework.errors.InputError` each instead of a
``RecursionError`` or ``ValueError`` from the standard library. Entry points: :func:`parse_json`
(raises :class:`BadJSON`, for readers that locate and quote the problem themselves),
:func:`decode_utf8`, :func:`load_json` and :func:`load_toml` (raise ``InputError``).
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from typing import Any

from casework.errors import InputError

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "BadJSON",
    "decode_utf8",
    "json_depth_problem",
    "load_json",
    "load_toml",
    "parse_json",
]

#: Deepest nesting of objects and lists accepted in a user file (real files stay far below).
MAX_DEPTH = 100
#: Most digits an integer may have (Python's int/str conversion limit).
MAX_INT_DIGITS = sys.int_info.default_max_str_digits

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_TOML_WHERE = re.compile(r"\((?:at line (\d+), column (\d+)|at end of document)\)\s*$")


class BadJSON(ValueError):
    """Text that is not acceptable JSON.

    Attributes:
        message: What is wrong, as a sentence without final period.
        lineno: 1-based line of the problem within the text, when known.
    """

    def __init__(self, message: str, lineno: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.lineno = lineno


def _constant(name: str) -> Any:
    raise BadJSON(f"{name} is not a JSON number (write null, or the value as a string)")


def _too_deep(value: Any, limit: int) -> bool:
    """Whether decoded JSON/TOML ``value`` nests objects/lists more than ``limit`` levels deep.

    Level by level, without recursion (the value may be nested deeper than the stack allows).
    Decoders build plain ``dict`` and ``list`` values only, hence the exact type tests (fast).
    """
    level = [value] if type(value) is dict or type(value) is list else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        deeper: list[Any] = []
        for node in level:
            for child in node.values() if type(node) is dict else node:
                if type(child) is dict or type(child) is list:
                    deeper.append(child)
        level = deeper
    return False


def json_depth_problem(value: Any, limit: int = MAX_DEPTH) -> str | None:
    """The problem of a decoded value nested more than ``limit`` levels deep, else ``None``."""
    if _too_deep(value, limit):
        return f"nested more than {limit} levels deep"
    return None


def parse_json(text: str | bytes) -> Any:
    """Parse JSON strictly: no `NaN`/`Infinity`, bounded nesting and integer size.

    Raises:
        BadJSON: The text is not JSON, nests more than :data:`MAX_DEPTH` levels, holds an
            integer longer than :data:`MAX_INT_DIGITS` digits, a non-finite constant or a lone
            UTF-16 surrogate (which no UTF-8 file can hold).
    """
    try:
        value = json.loads(text, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        # Some of json's messages end in "at" ("Unterminated string starting at"): said once.
        message = exc.msg.removesuffix(" at")
        raise BadJSON(f"invalid JSON: {message} at column {exc.colno}", exc.lineno) from None
    except RecursionError:
        raise BadJSON(f"nested more than {MAX_DEPTH} levels deep") from None
    except BadJSON:
        raise
    except UnicodeDecodeError as exc:
        raise BadJSON(f"invalid UTF-8 at byte {exc.start + 1}") from None
    except ValueError:
        # The only other ValueError json raises: the int/str conversion limit.
        raise BadJSON(f"a number has more than {MAX_INT_DIGITS} digits") from None
    problem = json_depth_problem(value)
    if problem is not None:
        raise BadJSON(problem)
    if _SURROGATE_ESCAPE.search(text if isinstance(text, str) else text.decode("utf-8", "replace")):
        # Valid pairs decode to one character; a lone half cannot be written back as UTF-8.
        problem = _lone_surrogate(value)
        if problem is not None:
            raise BadJSON(problem)
    return value


def _lone_surrogate(value: Any) -> str | None:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            found = _SURROGATE.search(node)
            if found:
                return (
                    f"holds a lone UTF-16 surrogate (\\u{ord(found.group()):04x}); "
                    "text must be valid Unicode"
                )
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return None


def decode_utf8(data: bytes, shown: str, *, bom_ok: bool = True) -> str:
    """UTF-8 text of a file's bytes (a leading byte-order mark is dropped when ``bom_ok``).

    Raises:
        InputError: The bytes are not UTF-8 (located by line and column), or start with a
            byte-order mark where none is allowed.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        if not bom_ok:
            raise InputError(
                shown, 1, None, "file starts with a UTF-8 byte-order mark; save it without one"
            )
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            shown, line, None, f"invalid UTF-8 at column {col}; save the file as UTF-8"
        ) from None


def load_json(data: bytes, shown: str) -> Any:
    """The JSON value of a whole file (UTF-8, a byte-order mark tolerated).

    Raises:
        InputError: Not UTF-8, or not acceptable JSON (see :func:`parse_json`), located by line.
    """
    text = decode_utf8(data, shown)
    try:
        return parse_json(text)
    except BadJSON as exc:
        raise InputError(shown, exc.lineno, None, exc.message) from None


def load_toml(data: bytes, shown: str) -> dict[str, Any]:
    """The table of a TOML file (UTF-8; a byte-order mark tolerated).

    Raises:
        InputError: Not UTF-8, not TOML (located by line where tomllib says), nested more than
            :data:`MAX_DEPTH` levels, or an integer longer than :data:`MAX_INT_DIGITS` digits.
    """
    text = decode_utf8(data, shown)
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        text_of = str(exc)
        where = _TOML_WHERE.search(text_of)
        line: int | None = None
        column = ""
        if where and where.group(1):
            line, column = int(where.group(1)), f" at column {where.group(2)}"
        elif where:  # "(at end of document)"
            line, column = text.count("\n") + (not text.endswith("\n")), " at the end of the file"
        message = text_of[: where.start()].rstrip() if where else text_of
        raise InputError(shown, line, None, f"invalid TOML: {message}{column}") from None
    except RecursionError:
        raise InputError(shown, None, None, f"nested more than {MAX_DEPTH} levels deep") from None
    except ValueError:
        raise InputError(
            shown, None, None, f"a number has more than {MAX_INT_DIGITS} digits"
        ) from None
    problem = json_depth_problem(table)
    if problem is not None:
        raise InputError(shown, None, None, problem)
    return table
