"""Relabel by rule: the rows a guideline change touches, as a JMESPath selector over the case.

A bump may carry a selector (``relabel_where``): a JMESPath expression evaluated on the case as
`cases.jsonl` holds it (``id``, ``slice``, ``situation`` with its fixtures and state, ``label``…).
A case is touched when the result is true in JMESPath's sense (not ``false``, ``null``, an empty
list, object or string). The selector is stored in the guideline's front matter under
``relabel_where_gN`` for the version ``gN`` that introduced it, so the file in git says why each
row went back. Relabelling rows labelled under an older version sends back only the rows some
later rule touches; one later bump without a selector means the change may touch any row, so
every row goes back (as before selectors existed).

Entry points: :func:`compile_selector`, :func:`rules_since`, :func:`touched_by`,
:func:`preview_rule`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jmespath
from jmespath import exceptions as jmespath_errors
from jmespath.parser import ParsedResult

from casework.errors import UsageError
from casework.labelling.model import guideline_number
from casework.schema import Case

__all__ = [
    "RULE_KEY_RE",
    "SAMPLE_SIZE",
    "RelabelRule",
    "RulePreview",
    "compile_selector",
    "preview_rule",
    "rule_key",
    "rules_of",
    "rules_since",
    "touched_by",
]

#: How many matching case ids a preview shows.
SAMPLE_SIZE = 10
#: Front matter keys holding a version's selector: ``relabel_where_g8``.
RULE_KEY_RE = re.compile(r"^relabel_where_g([1-9][0-9]*)\s*:\s*(.*?)\s*$")


@dataclass(frozen=True)
class RelabelRule:
    """The selector a guideline version came with.

    Attributes:
        version: The version that introduced the rule (``refunds-g8``).
        selector: The JMESPath expression, as written.
    """

    version: str
    selector: str

    @property
    def reads_label(self) -> bool:
        """Whether the selector reads the case's label (then labellers are not shown it)."""
        return "label" in _fields(compile_selector(self.selector).parsed)

    def shown_to_labellers(self) -> dict[str, str | None]:
        """What a blind sheet or label page may say about the rule.

        The selector text, unless it reads the label: naming the old label's outcome would tell a
        labeller what someone decided before, so only the version is shown then.
        """
        if self.reads_label:
            return {"guideline_version": self.version, "rule": None}
        return {"guideline_version": self.version, "rule": self.selector}


def _fields(node: Mapping[str, Any]) -> set[str]:
    """Every field name a parsed JMESPath expression reads."""
    found: set[str] = set()
    if node.get("type") == "field":
        found.add(str(node.get("value")))
    for child in node.get("children", ()):
        if isinstance(child, Mapping):
            found |= _fields(child)
    return found


def compile_selector(text: str, *, param: str = "relabel_where") -> ParsedResult:
    """Parse a selector.

    Raises:
        UsageError: Empty, multi-line, or not JMESPath; the message gives the column.
    """
    if not text.strip():
        raise UsageError("a selector is a JMESPath expression over the case. Got ''.", param=param)
    if "\n" in text or "\r" in text:
        raise UsageError("a selector is one line (it is stored in front matter).", param=param)
    try:
        return jmespath.compile(text)
    except jmespath_errors.JMESPathError as exc:
        column = getattr(exc, "lex_position", None)
        where = f"column {column + 1}: " if isinstance(column, int) else ""
        token = getattr(exc, "token_value", None)
        near = f" near {token!r}" if token not in (None, "") else ""
        reason = getattr(exc, "msg", None) or type(exc).__name__
        raise UsageError(
            f"{where}not a JMESPath expression ({reason}{near}). Got '{text}'.", param=param
        ) from exc


def rule_key(number: int) -> str:
    """The front matter key of version ``gN``'s selector."""
    return f"relabel_where_g{number}"


def rules_of(text: str) -> dict[int, str]:
    """The selectors a guideline file stores, by version number (front matter only)."""
    lines = text.splitlines()
    out: dict[int, str] = {}
    if not lines or lines[0].strip() != "---":
        return out
    for line in lines[1:]:
        if line.strip() == "---":
            break
        match = RULE_KEY_RE.match(line)
        if match:
            raw = match.group(2)
            try:
                value = json.loads(raw)
            except ValueError:
                value = raw
            out[int(match.group(1))] = str(value)
    return out


def rules_since(
    text: str, slice_name: str, old: str, current: str
) -> tuple[RelabelRule, ...] | None:
    """The rules of every version after ``old`` up to ``current``.

    Returns ``None`` when one of those versions has no selector (its change may touch any row),
    and ``()`` when ``old`` is not older than ``current``.
    """
    first, last = guideline_number(old), guideline_number(current)
    if first is None or last is None or first >= last:
        return ()
    stored = rules_of(text)
    rules = []
    for number in range(first + 1, last + 1):
        if number not in stored:
            return None
        rules.append(RelabelRule(f"{slice_name}-g{number}", stored[number]))
    return tuple(rules)


def _view(case: Case) -> dict[str, Any]:
    return case.model_dump(mode="json", by_alias=True, exclude_none=True)


def touched_by(case: Case, rules: Sequence[RelabelRule]) -> tuple[RelabelRule, ...]:
    """The rules whose selector selects ``case``."""
    if not rules:
        return ()
    view = _view(case)
    return tuple(r for r in rules if _truthy(compile_selector(r.selector).search(view)))


def _truthy(value: object) -> bool:
    # JMESPath's own truth: false, null and empty containers or strings are false; 0 is true.
    # Identity checks: 0 == False in Python, and 0 selects.
    if value is None or value is False:
        return False
    return not (isinstance(value, list | dict | str) and not value)


@dataclass(frozen=True)
class RulePreview:
    """What a selector would send back in one dataset, before anything is sent.

    Attributes:
        dataset: The dataset.
        slice: The slice.
        labelled_under: The guideline version the rows are labelled under.
        labelled: Rows of the slice labelled under it.
        selected: Ids of those the selector selects, sorted.
        sample: The first :data:`SAMPLE_SIZE` of them.
    """

    dataset: str
    slice: str
    labelled_under: str
    labelled: int
    selected: tuple[str, ...]

    @property
    def sample(self) -> tuple[str, ...]:
        """The first ids of the selection."""
        return self.selected[:SAMPLE_SIZE]


def preview_rule(
    dataset: str, cases: Sequence[Case], slice_name: str, labelled_under: str, selector: str
) -> RulePreview:
    """Count and list the rows of ``slice_name`` labelled under ``labelled_under`` it selects.

    Raises:
        UsageError: The selector is not JMESPath.
    """
    compiled = compile_selector(selector)
    rows = [
        c
        for c in cases
        if c.slice == slice_name
        and c.label is not None
        and c.label.guideline_version == labelled_under
    ]
    selected = sorted(c.id for c in rows if _truthy(compiled.search(_view(c))))
    return RulePreview(dataset, slice_name, labelled_under, len(rows), tuple(selected))
