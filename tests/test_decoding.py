from __future__ import annotations

import pytest

from casework.decoding import MAX_DEPTH, BadJSON, decode_utf8, load_toml, parse_json
from casework.errors import InputError


def test_nesting_up_to_the_limit_is_read_and_one_more_is_refused() -> None:
    assert parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    for text in (
        "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        '{"a":' * 200_000 + "1" + "}" * 200_000,
    ):
        with pytest.raises(BadJSON, match=f"^nested more than {MAX_DEPTH} levels deep$"):
            parse_json(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("9" * 4301, "a number has more than 4300 digits"),
        ('{"x": NaN}', "NaN is not a JSON number (write null, or the value as a string)"),
        ("[Infinity]", "Infinity is not a JSON number (write null, or the value as a string)"),
        ('"\\udc00"', "holds a lone UTF-16 surrogate (\\udc00); text must be valid Unicode"),
        ("{", "invalid JSON: Expecting property name enclosed in double quotes at column 2"),
    ],
)
def test_json_problems_are_messages(text: str, message: str) -> None:
    with pytest.raises(BadJSON) as info:
        parse_json(text)
    assert info.value.message == message


def test_surrogate_pairs_are_text() -> None:
    assert parse_json('"\\ud83d\\ude00"') == "\N{GRINNING FACE}"


def test_invalid_utf8_is_located_by_line_and_column() -> None:
    with pytest.raises(InputError) as info:
        decode_utf8(b"a = 1\nb = '\xe9'\n", "casework.toml")
    assert str(info.value) == "casework.toml:2: invalid UTF-8 at column 6; save the file as UTF-8."


def test_toml_problems_are_located() -> None:
    with pytest.raises(InputError) as info:
        load_toml(b"a = 1\nb = [1,\n", "renames.toml")
    assert str(info.value) == "renames.toml:2: invalid TOML: Invalid value at the end of the file."
    with pytest.raises(InputError) as located:
        load_toml(b"a = 1\nb = = 2\n", "renames.toml")
    assert str(located.value) == "renames.toml:2: invalid TOML: Invalid value at column 5."
    with pytest.raises(InputError, match=r"^renames\.toml: a number has more than 4300 digits"):
        load_toml(b"a = " + b"9" * 5000, "renames.toml")
    with pytest.raises(InputError, match=f"nested more than {MAX_DEPTH} levels deep"):
        load_toml(b"a = " + b"[" * 3000 + b"]" * 3000, "renames.toml")
    assert load_toml(b"\xef\xbb\xbfa = 1\n", "renames.toml") == {"a": 1}
