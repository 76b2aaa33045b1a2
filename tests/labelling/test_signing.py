"""Sheet-line signatures: only the one casework gave a line matches, whatever a sheet holds."""

from __future__ import annotations

import pytest

from casework.labelling.signing import line_signature, signature_matches

KEY = bytes(range(32))


def test_the_given_signature_matches_in_any_case_and_with_spaces() -> None:
    given = line_signature(KEY, "label", "refunds", "ann", "c-1")
    assert signature_matches(KEY, given, "label", "refunds", "ann", "c-1")
    assert signature_matches(KEY, f" {given.upper()} ", "label", "refunds", "ann", "c-1")
    assert not signature_matches(KEY, given, "label", "refunds", "bo", "c-1")


@pytest.mark.parametrize("edited", ["\x80", "é" * 32, "\udcff", "", "0" * 32])
def test_an_edited_signature_is_no_match_never_an_error(edited: str) -> None:
    assert not signature_matches(KEY, edited, "verdict", "judge", "ann", "v-1")
