"""Values compared as BFCL's AST checker compares them, Java and JavaScript source text included.

Strings compare once standardised (:func:`bfcl_standardize`), acceptable objects key by key
(:func:`bfcl_equal`).

BFCL v4 offers its Java and JavaScript functions with every parameter typed as a string: the model
writes each argument as source text (``true``, ``50L``, ``new String[]{a, b}``, ``{'k': 1}``) and
BFCL's AST checker reads that text as the parameter's declared type before comparing it with the
acceptable values. Text that does not read as the declared type stays text (a *variable*, compared
as written). Entry points: :func:`read_source` (text → value) and :func:`source_matches` (an
argument against its acceptable values, as BFCL's checker decides).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

__all__ = [
    "JAVA_TYPES",
    "JS_TYPES",
    "SourceLanguage",
    "SourceTypeError",
    "bfcl_equal",
    "bfcl_standardize",
    "read_source",
    "source_matches",
    "split_source_type",
]

SourceLanguage = Literal["java", "js"]

#: Declared Java types and the Python type BFCL reads each as.
JAVA_TYPES: Mapping[str, type] = {
    "byte": int,
    "short": int,
    "integer": int,
    "long": int,
    "float": float,
    "double": float,
    "boolean": bool,
    "char": str,
    "String": str,
    "any": str,
    "Array": list,
    "ArrayList": list,
    "Queue": list,
    "Stack": list,
    "Set": set,
    "HashMap": dict,
    "Hashtable": dict,
}
#: Declared JavaScript types and the Python type BFCL reads each as.
JS_TYPES: Mapping[str, type] = {
    "String": str,
    "any": str,
    "integer": int,
    "Bigint": int,
    "float": float,
    "Boolean": bool,
    "dict": dict,
    "array": list,
}
#: Container types whose items have a declared type of their own (``Array<long>``).
_WITH_ITEMS = ("Array", "ArrayList", "array")
#: Java types BFCL's checker knows but cannot read (it stops there): no verdict is possible.
_UNREADABLE = ("Set", "Hashtable", "Queue", "Stack")


class SourceTypeError(ValueError):
    """A declared type BFCL cannot read (unknown, or a Java collection it has no reader for)."""


def _types(language: SourceLanguage) -> Mapping[str, type]:
    return JAVA_TYPES if language == "java" else JS_TYPES


def split_source_type(language: SourceLanguage, source_type: str) -> tuple[str, str | None]:
    """``Array<long>`` → ``("Array", "long")``; ``boolean`` → ``("boolean", None)``.

    Raises:
        SourceTypeError: A type (or item type) the language's table does not have, a container
            without its item type, or a Java collection BFCL cannot read.
    """
    outer, _, rest = source_type.partition("<")
    items = rest.removesuffix(">") if rest else None
    known = _types(language)
    for t in (outer, items):
        if t is not None and t not in known:
            raise SourceTypeError(f"{language} type {t!r} is not one BFCL reads")
    if outer in _UNREADABLE or items in _UNREADABLE:
        raise SourceTypeError(f"BFCL's checker has no reader for Java {outer!r}")
    if (outer in _WITH_ITEMS) != (items is not None):
        raise SourceTypeError(f"{source_type!r}: item types go with Array, ArrayList and array")
    return outer, items


_BFCL_STRIPPED = re.compile(r"[ ,./\-_*^]")


def bfcl_standardize(text: str) -> str:
    """A string as BFCL's AST checker compares it.

    Spaces and ``, . / - _ * ^`` removed, lower-cased, ``'`` read as ``"`` (so ``April 1, 2024``
    and ``april 1 2024`` compare equal).

    >>> bfcl_standardize("New-York, NY")
    'newyorkny'
    """
    return _BFCL_STRIPPED.sub("", text).lower().replace("'", '"')


def _bfcl_scalar(acceptable: Any, value: Any) -> bool:
    if isinstance(acceptable, str):
        return isinstance(value, str) and bfcl_standardize(value) == bfcl_standardize(acceptable)
    if isinstance(acceptable, bool) or isinstance(value, bool):
        return type(acceptable) is type(value) and acceptable == value
    if isinstance(acceptable, float) and isinstance(value, int):
        return float(value) == acceptable  # BFCL reads an integer given for a float as a float
    return type(acceptable) is type(value) and bool(acceptable == value)


def _bfcl_loose(acceptable: Any, value: Any) -> bool:
    # Inside an object BFCL compares with Python's ``==`` after standardising strings: no type
    # check there (``1 == 1.0``, and even ``True == 1``).
    if isinstance(acceptable, str) and isinstance(value, str):
        return bfcl_standardize(value) == bfcl_standardize(acceptable)
    return bool(acceptable == value)


def _bfcl_object(acceptable: Mapping[str, Any], value: Any) -> bool:
    """BFCL's object rule: each key maps to its acceptable values; ``""`` among them: omissible.

    A string where the list of values belongs is read character by character, as BFCL's checker
    reads it (BFCL v4's ``simple_java_64`` publishes ``{"format": "epoch_millis"}``: there ``"e"``
    passes and ``"epoch_millis"`` fails).
    """
    if not isinstance(value, Mapping):
        return False
    for key, given in value.items():
        options = acceptable.get(key)
        if isinstance(options, str):
            options = list(options)
        if not isinstance(options, list) or not any(_bfcl_loose(o, given) for o in options):
            return False
    return all(key in value or "" in options for key, options in acceptable.items())


def bfcl_equal(acceptable: Any, value: Any) -> bool:
    """Whether ``value`` equals one acceptable value as BFCL's AST checker compares them.

    Strings compare by :func:`bfcl_standardize` (inside lists and objects too); types agree
    (an integer stands for a float); an acceptable object maps each key to its list of acceptable
    values, and a list of objects matches item by item.
    """
    if isinstance(acceptable, Mapping):
        return _bfcl_object(acceptable, value)
    if isinstance(acceptable, list):
        if not isinstance(value, list) or len(value) != len(acceptable):
            return False
        if any(isinstance(a, Mapping) for a in acceptable):
            return all(bfcl_equal(a, v) for a, v in zip(acceptable, value, strict=True))
        return [bfcl_standardize(v) if isinstance(v, str) else v for v in value] == [
            bfcl_standardize(a) if isinstance(a, str) else a for a in acceptable
        ]
    return _bfcl_scalar(acceptable, value)


# --- Java -------------------------------------------------------------------------------------
# Each pattern is anchored as `re.match(^…$)` anchors: `$` also matches before a final newline.
_J_INT = re.compile(r"-?\d+$")
_J_FLOAT = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$")
_J_DOUBLE = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?$")
_J_LONG = re.compile(r"-?\d+[lL]$")
_J_ARRAY = re.compile(r"new\s+\w+\[\]\s*\{(.*?)\}")
_J_AS_LIST = re.compile(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)")
_J_ADDS = re.compile(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", re.DOTALL)
_J_ADD = re.compile(r"add\((.+?)\)")
_J_NEW_LIST = re.compile(r"new\s+ArrayList<\w*>\(\)")
_J_MAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", re.DOTALL)
_J_PUT = re.compile(r"put\(\"(.*?)\",\s*(.*?)\)")
_J_NEW_MAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)")
_SUFFIX = re.compile(r"[fFlL]$")


def _number(text: str) -> Any:
    """Python's own int, then float reading of a literal; text when neither reads it."""
    for read in (int, float):
        try:
            return read(text)
        except ValueError:
            continue
    return text


def _java_literal(text: str) -> Any:
    """A Java literal whose type is not declared (collection items, map values)."""
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if _J_LONG.match(text) or _J_FLOAT.match(text):
        return _number(_SUFFIX.sub("", text))
    return _number(text)


def _java_items(parts: Sequence[str], items: str) -> list[Any]:
    # An ArrayList's String and char items are read by dropping their first and last character
    # (the quotes); other item types are read as their declared type.
    if items in ("String", "char"):
        return [p[1:-1] for p in parts]
    return [_read_java(p, items, None) for p in parts]


def _java_list(text: str, outer: str, items: str | None) -> Any:
    if outer == "Array":
        found = _J_ARRAY.search(text)
        if found is None:
            return text
        parts = [p.strip() for p in found.group(1).split(",") if p.strip()]
        return [_read_java(p, items, None) if items else _java_literal(p) for p in parts]
    item_type = items or "any"
    found = _J_AS_LIST.search(text)
    if found is not None:
        return _java_items([p.strip() for p in found.group(1).split(",")], item_type)
    found = _J_ADDS.search(text)
    if found is not None:
        return _java_items([m.strip() for m in _J_ADD.findall(found.group(1))], item_type)
    return [] if _J_NEW_LIST.search(text) else text


def _java_map(text: str) -> Any:
    found = _J_MAP.search(text)
    if found is not None:
        body = found.group(1)
        if not body.strip():
            return {}
        return {key: _java_literal(value.strip()) for key, value in _J_PUT.findall(body)}
    return {} if _J_NEW_MAP.search(text) else text


def _read_java(text: str, outer: str, items: str | None) -> Any:
    scalar: dict[str, tuple[re.Pattern[str], Callable[[str], Any]]] = {
        "byte": (_J_INT, int),
        "short": (_J_INT, int),
        "integer": (_J_INT, int),
        "long": (_J_LONG, lambda t: int(_SUFFIX.sub("", t))),
        "float": (_J_FLOAT, lambda t: float(_SUFFIX.sub("", t))),
        "double": (_J_DOUBLE, float),
    }
    if outer in scalar:
        pattern, read = scalar[outer]
        return read(text) if pattern.match(text) else text
    if outer == "boolean":
        return text == "true" if text in ("true", "false") else text
    if outer in ("Array", "ArrayList"):
        return _java_list(text, outer, items)
    if outer == "HashMap":
        return _java_map(text)
    # char, String, any: the text itself (BFCL's char reading keeps the text as written).
    return text


# --- JavaScript -------------------------------------------------------------------------------
_S_INT = re.compile(r"-?\d+$")
_S_FLOAT = re.compile(r"-?\d+(\.\d+)?$")
_S_BIGINT = re.compile(r"-?\d+n$")
_S_ARRAY_2D = re.compile(
    r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)"
)
_S_ARRAY = re.compile(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)")
_S_INNER = re.compile(r"\[(.*?)\]")
_S_OBJECT = re.compile(r"\{(.*?)\}")
_S_PAIR = re.compile(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)")


def _quoted(text: str) -> bool:
    return (text.startswith('"') and text.endswith('"')) or (
        text.startswith("'") and text.endswith("'")
    )


def _js_literal(text: str) -> Any:
    """A JavaScript literal whose type is not declared (array items, object values)."""
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    return text[1:-1] if _quoted(text) else _number(text)


def _js_array(code: str, items: str | None) -> Any:
    two_d = _S_ARRAY_2D.match(code)
    if two_d is not None:
        rows = []
        for i, inner in enumerate(_S_INNER.findall(two_d.group(0))):
            inner = inner.strip()
            if i == 0 and inner.startswith("["):
                inner = inner[1:]
            rows.append([_js_literal(e.strip()) for e in inner.split(",")])
        return rows
    found = _S_ARRAY.match(code)
    if found is None:
        return code
    body = next((g for g in found.groups() if g is not None), "").strip()
    parts = body.split(",") if body else []
    if items is None:
        return [_js_literal(p.strip()) for p in parts]
    return [_read_js(p.strip(), items, None) for p in parts]


def _js_object(code: str) -> Any:
    if code == "{}":
        return {}
    found = _S_OBJECT.match(code)
    if found is None:
        return code
    out: dict[str, Any] = {}
    for key, raw in _S_PAIR.findall(found.group(1)):
        value = raw.strip()
        if value.startswith("[") and value.endswith("]"):
            out[key.strip().strip("'\"")] = _js_array(value, None)
        elif value.startswith("{") and value.endswith("}"):
            out[key.strip().strip("'\"")] = _js_object(value)
        else:
            out[key.strip().strip("'\"")] = _js_literal(value.strip("'\""))
    return out


def _read_js(text: str, outer: str, items: str | None) -> Any:
    if outer == "String":
        return text[1:-1] if _quoted(text) else text
    if outer in ("integer", "float"):
        pattern = _S_INT if outer == "integer" else _S_FLOAT
        return (int if outer == "integer" else float)(text) if pattern.match(text) else text
    if outer == "Bigint":
        return int(text[:-1]) if _S_BIGINT.match(text) and text.endswith("n") else text
    if outer == "Boolean":
        return text == "true" if text in ("true", "false") else text
    if outer == "array":
        return _js_array(text.strip(), items)
    if outer == "dict":
        return _js_object(text.strip())
    return text  # any


def read_source(language: SourceLanguage, source_type: str, text: str) -> Any:
    """Source text read as its declared type, as BFCL reads it; text it cannot read stays text.

    >>> read_source("java", "long", "50L"), read_source("java", "long", "50")
    (50, '50')
    >>> read_source("js", "array<String>", "['a', 'b']")
    ['a', 'b']

    Raises:
        SourceTypeError: A type BFCL cannot read (:func:`split_source_type`).
    """
    outer, items = split_source_type(language, source_type)
    if language == "java":
        return _read_java(text, outer, items)
    return _read_js(text, outer, items)


# --- BFCL's comparison of the value read ------------------------------------------------------


def _first_type(acceptable: Sequence[Any]) -> type | None:
    return next((type(a) for a in acceptable if a != ""), None)


def _typed(value: Any, acceptable: Sequence[Any], want: type, items: type | None) -> bool | None:
    """BFCL's type rule: ``None`` when the value fails it, else whether it is a *variable*.

    A value of the declared type passes (a list's items are checked one level deep against each
    acceptable list); a value of the acceptable values' type passes as a variable (compared as
    written). The acceptable values' type differing from the declared one also makes a variable.
    """
    first = _first_type(acceptable)
    variable = first is not None and first is not want
    given: Any = value  # a list when its type is `want` below
    if type(value) is want:
        if items is None:
            return variable
        for option in acceptable:
            if not isinstance(option, list) or all(
                _typed(v, option, items, None) is not None for v in given
            ):
                return variable
        return None
    return True if first is not None and type(value) is first else None


def _standard(value: Any) -> Any:
    return bfcl_standardize(value) if isinstance(value, str) else value


def _list_matches(value: list[Any], acceptable: Sequence[Any]) -> bool:
    # An acceptable string here is read item by item (its characters), as BFCL's loop reads it.
    given = [_standard(v) for v in value]
    for option in acceptable:
        if isinstance(option, (list, str)) and given == [_standard(o) for o in option]:
            return True
    return False


def _list_of_objects(value: list[Any], acceptable: Sequence[Any]) -> bool:
    for option in acceptable:
        if not isinstance(option, (list, str)) or len(option) != len(value):
            continue
        if all(
            isinstance(o, Mapping) and _bfcl_object(o, v)
            for o, v in zip(option, value, strict=True)
        ):
            return True
    return False


def source_matches(
    language: SourceLanguage, source_type: str, acceptable: Sequence[Any], value: Any
) -> bool:
    """Whether an argument passes BFCL's checker for a Java or JavaScript parameter.

    The argument must be text; it is read as ``source_type`` (:func:`read_source`), type-checked
    as BFCL does, then compared: objects key by key, lists of objects item by item, strings and
    lists with BFCL's string standardisation, anything else (and variables) by ``==``.

    Raises:
        SourceTypeError: A type BFCL cannot read.
    """
    if not isinstance(value, str):
        return False
    outer, items = split_source_type(language, source_type)
    read = read_source(language, source_type, value)
    types = _types(language)
    want, item_type = types[outer], types[items] if items else None
    variable = _typed(read, acceptable, want, item_type)
    if variable is None:
        return False
    if not variable:
        if want is dict:
            return any(isinstance(o, Mapping) and _bfcl_object(o, read) for o in acceptable)
        if want is list and item_type is dict:
            return _list_of_objects(read, acceptable)
        if want is str:
            return bfcl_standardize(read) in [
                bfcl_standardize(a) for a in acceptable if isinstance(a, str)
            ]
        if want is list:
            return _list_matches(read, acceptable)
    return read in acceptable
