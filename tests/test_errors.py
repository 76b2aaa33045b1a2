"""How an offending value is shown in a located error."""

from __future__ import annotations

from casework.errors import format_got


def test_got_shows_control_characters_escaped() -> None:
    assert format_got("a\x00b\nc\td\x1b[31m\x7f") == "'a\\x00b\\nc\\td\\x1b[31m\\x7f'"
    assert format_got("plain é") == "'plain é'"
