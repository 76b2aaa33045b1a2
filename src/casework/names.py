"""Names that become paths: dataset names, run ids, slice names, labeller ids.

One rule for all of them, checked where they enter (:func:`name_problem` for validators,
:func:`check_name` for parameters), and :func:`inside` for every path derived from one, so no
name can make casework write outside the folder it belongs in.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator

from casework.errors import UsageError, format_got

__all__ = [
    "CASE_ID_RULE",
    "NAME_RULE",
    "LabellerId",
    "Name",
    "case_id_problem",
    "check_name",
    "inside",
    "name_problem",
]

_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

#: The rule, as messages state it.
NAME_RULE = "starts with a letter or digit and holds only letters, digits and ._-"


_CASE_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._~:+-]{0,199}")

#: The rule for case ids, as messages state it: a name's characters plus `~:+`, because a
#: synthetic variant is `<seed>~<transform>[-n]` and imported ids keep their `:` and `+`. Case
#: ids never become paths on their own.
CASE_ID_RULE = (
    "starts with a letter or digit and holds only letters, digits and ._~:+- (at most 200)"
)


def case_id_problem(value: str) -> str | None:
    """Why ``value`` cannot be a case id (``None`` when it can).

    >>> case_id_problem("status-056~paraphrase") is None
    True
    >>> case_id_problem("../etc") == CASE_ID_RULE
    True
    """
    return None if _CASE_ID_RE.fullmatch(value) else CASE_ID_RULE


def name_problem(value: str, max_length: int = 200) -> str | None:
    """Why ``value`` cannot be a name (``None`` when it can): the rule, or its length."""
    if _NAME_RE.fullmatch(value) is None:
        return NAME_RULE
    if len(value) > max_length:
        return f"at most {max_length} characters"
    return None


_NAMES_KEPT = 4096
_NAMES_SEEN: dict[int, set[str]] = {}  # by length limit: a valid slice may be too long an id


def _valid(max_length: int) -> AfterValidator:
    # A dataset names a few slices and labellers, on every line: names already seen valid are
    # looked up, not matched again (bounded: a file of ever-new names costs a match each).
    seen = _NAMES_SEEN.setdefault(max_length, set())

    def check(value: str) -> str:
        if value in seen:
            return value
        problem = name_problem(value, max_length)
        if problem is not None:
            raise ValueError(f"a name {problem}")
        if len(seen) < _NAMES_KEPT and type(value) is str:
            seen.add(value)
        return value

    return AfterValidator(check)


Name = Annotated[str, _valid(200)]
"""A field holding a name that may become a path (dataset, run id, slice)."""
LabellerId = Annotated[str, _valid(64)]
"""A labeller id (it becomes part of sheet file names)."""


def check_name(value: str, what: str, max_length: int = 200) -> str:
    """Return ``value`` if it is a valid name.

    Args:
        value: The name.
        what: What it names, for the message (``dataset name``, ``run id``…).
        max_length: Longest allowed.

    Raises:
        UsageError: ``value`` breaks the rule (e.g. holds ``/`` or ``..``).
    """
    problem = name_problem(value, max_length)
    if problem is not None:
        raise UsageError(f"{what}: a name {problem}. Got {format_got(value)}.")
    return value


def inside(root: Path, path: Path, what: str) -> Path:
    """Return ``path`` if it lies inside ``root`` (compared without following links).

    Raises:
        UsageError: ``path`` leaves ``root``.
    """
    base = os.path.normpath(os.path.abspath(root))
    target = os.path.normpath(os.path.abspath(path))
    if os.path.commonpath([base, target]) != base:
        raise UsageError(f"{what}: {path} is outside {root}.")
    return path
