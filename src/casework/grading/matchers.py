"""Matching tool calls against a label's tool requirements, and state assertions over the final state.

Requirements match calls as a multiset (two `issue_refund` requirements need two distinct calls),
in any order unless an ordered check asks; arguments are matched by `any` / `exact` / `any_of` /
`subset` / `regex` / `predicate` (a JMESPath expression over the argument), `exact` and `any_of`
optionally comparing as BFCL's AST checker does (:mod:`casework.grading.bfcl_values`, Java and
JavaScript source text included). A call that returned an error
satisfies a required tool only when the requirement sets `allow_error`. Entry points:
:func:`match_required`, :func:`match_exactly`, :func:`match_forbidden`, :func:`match_in_order`, :func:`evaluate_assertion`.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jmespath
import jmespath.exceptions
import jmespath.parser
import jmespath.visitor
from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError
from jsonpath_ng.ext.parser import parse as jsonpath_parse

from casework.grading.bfcl_values import (
    SourceLanguage,
    SourceTypeError,
    bfcl_equal,
    source_matches,
)
from casework.schema import ArgMatcher, StateAssertion, ToolRequirement, TrajectoryToolCall

__all__ = [
    "AssertionResult",
    "MatcherError",
    "RequirementResult",
    "argument_matches",
    "call_matches",
    "call_satisfies",
    "call_satisfies_exactly",
    "deep_subset",
    "describe_requirement",
    "evaluate_assertion",
    "match_exactly",
    "match_forbidden",
    "match_in_order",
    "match_required",
]


class MatcherError(ValueError):
    """A matcher or assertion in the case file is malformed (bad regex, bad expression)."""


@functools.lru_cache(maxsize=4096)
def _jmespath(expression: str) -> jmespath.parser.ParsedResult:
    """An expression parsed once (a case's k trials, and cases sharing assertions, reuse it).

    Raises:
        jmespath.exceptions.JMESPathError: It does not parse (not cached: raised each time).
    """
    return jmespath.compile(expression)


#: One interpreter for every search: `jmespath.search` built a parser and an interpreter per
#: call (most of an assertion's cost). It keeps no state between visits but a method cache.
_INTERPRETER = jmespath.visitor.TreeInterpreter()


def _search(expression: str, value: Any) -> Any:
    """``jmespath.search(expression, value)``, the expression parsed once.

    Raises:
        jmespath.exceptions.JMESPathError: The expression is invalid, or a function's argument
            has the wrong type.
    """
    return _INTERPRETER.visit(_jmespath(expression).parsed, value)


@functools.lru_cache(maxsize=1024)
def _jsonpath(expression: str) -> Any:
    """A JSONPath expression parsed once (parsing is far slower than a search)."""
    return jsonpath_parse(expression)


def deep_subset(expected: Any, actual: Any) -> bool:
    """True when ``expected`` is contained in ``actual``.

    Objects: every expected key present with a contained value. Lists: every expected item
    contained in some actual item. Anything else: equality (``1 == 1.0``; ``True != 1``).
    """
    if isinstance(expected, Mapping):
        return isinstance(actual, Mapping) and all(
            key in actual and deep_subset(value, actual[key]) for key, value in expected.items()
        )
    if isinstance(expected, list):
        return isinstance(actual, list) and all(
            any(deep_subset(item, candidate) for candidate in actual) for item in expected
        )
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    return bool(expected == actual)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _same(matcher: ArgMatcher, expected: Any, value: Any) -> bool:
    return bfcl_equal(expected, value) if matcher.strings == "bfcl" else _equal(expected, value)


def _source_text(matcher: ArgMatcher, value: Any) -> bool:
    """A ``bfcl-java`` / ``bfcl-js`` argument: source text read as its type, then compared."""
    language: SourceLanguage = "java" if matcher.strings == "bfcl-java" else "js"
    acceptable = matcher.value if matcher.match == "any_of" else [matcher.value]
    try:
        return source_matches(language, str(matcher.source_type), acceptable, value)
    except SourceTypeError as exc:
        raise MatcherError(str(exc)) from exc


def argument_matches(matcher: ArgMatcher, present: bool, value: Any) -> bool:
    """Whether one argument satisfies its matcher (an ``optional`` one may be left out).

    Raises:
        MatcherError: A regex or JMESPath predicate does not compile.
    """
    if not present:
        return matcher.optional
    if matcher.match == "any":
        return True
    if matcher.strings in ("bfcl-java", "bfcl-js") and matcher.match in ("exact", "any_of"):
        return _source_text(matcher, value)
    if matcher.match == "exact":
        return _same(matcher, matcher.value, value)
    if matcher.match == "any_of":
        return any(_same(matcher, option, value) for option in matcher.value)
    if matcher.match == "subset":
        return deep_subset(matcher.value, value)
    if matcher.match == "regex":
        try:
            return isinstance(value, str) and re.fullmatch(str(matcher.value), value) is not None
        except re.error as exc:
            raise MatcherError(f"regex {matcher.value!r} does not compile: {exc}") from exc
    try:
        return bool(_search(str(matcher.value), value))
    except jmespath.exceptions.JMESPathError as exc:
        raise MatcherError(f"JMESPath predicate {matcher.value!r} is invalid: {exc}") from exc


def call_matches(requirement: ToolRequirement, call: TrajectoryToolCall) -> bool:
    """Whether a call is of the required tool and satisfies every argument matcher."""
    if call.name != requirement.name:
        return False
    if not requirement.arguments:
        return True
    return all(
        argument_matches(m, key in call.arguments, call.arguments.get(key))
        for key, m in requirement.arguments.items()
    )


def call_satisfies(requirement: ToolRequirement, call: TrajectoryToolCall) -> bool:
    """Whether a call fulfils a required tool: it matches, and it succeeded unless errors are allowed.

    A call the tool answered with an error did not do what the label requires, so it counts only
    when the requirement says ``allow_error``. (Forbidden tools use :func:`call_matches`: an
    attempt counts whatever the tool answered.)
    """
    return (call.error is None or requirement.allow_error) and call_matches(requirement, call)


def describe_requirement(requirement: ToolRequirement) -> str:
    """``issue_refund(amount exact 12, order_id any)``; ``lookup (errors allowed)``."""
    errors = " (errors allowed)" if requirement.allow_error else ""
    if not requirement.arguments:
        return requirement.name + errors
    parts = []
    for key, m in requirement.arguments.items():
        how = "any" if m.match == "any" else f"{m.match} {json.dumps(m.value)}"
        if m.strings != "exact":
            how += f" ({m.strings} strings{', ' + m.source_type if m.source_type else ''})"
        parts.append(f"{key} {how}{' (optional)' if m.optional else ''}")
    return f"{requirement.name}({', '.join(parts)}){errors}"


@dataclass(frozen=True)
class RequirementResult:
    """Outcome of matching requirements against calls.

    Attributes:
        unmatched: Requirements no distinct call satisfied (required), or that some call
            satisfied (forbidden).
        matched: For each matched requirement index, the index of the call it used.
    """

    unmatched: list[ToolRequirement]
    matched: dict[int, int]


def match_required(
    requirements: Sequence[ToolRequirement], calls: Sequence[TrajectoryToolCall]
) -> RequirementResult:
    """Maximum bipartite matching of requirements to distinct satisfying calls (order ignored).

    A call satisfies a requirement as :func:`call_satisfies` says (an errored call only with
    ``allow_error``).

    Kuhn's augmenting-path algorithm; labels name a handful of tools, so O(R·E) is nothing.
    """
    edges = []
    for req in requirements:
        # call_satisfies, with the cheap tests first (the same calls reach the matchers)
        name, errors_ok = req.name, req.allow_error
        edges.append(
            [
                j
                for j, call in enumerate(calls)
                if call.name == name
                and (errors_ok or call.error is None)
                and call_matches(req, call)
            ]
        )
    return _matching(requirements, edges)


def call_satisfies_exactly(requirement: ToolRequirement, call: TrajectoryToolCall) -> bool:
    """:func:`call_satisfies`, and the call passes no argument the requirement does not list."""
    return call.arguments.keys() <= requirement.arguments.keys() and call_satisfies(
        requirement, call
    )


def match_exactly(
    requirements: Sequence[ToolRequirement], calls: Sequence[TrajectoryToolCall]
) -> RequirementResult:
    """:func:`match_required` with calls that satisfy requirements exactly.

    A call satisfies a requirement only as :func:`call_satisfies_exactly` says (BFCL's rule: an
    argument no acceptable answer lists is wrong).
    """
    edges = [
        [j for j, call in enumerate(calls) if call_satisfies_exactly(req, call)]
        for req in requirements
    ]
    return _matching(requirements, edges)


def _matching(requirements: Sequence[ToolRequirement], edges: list[list[int]]) -> RequirementResult:
    # When each requirement's first satisfying call is one no earlier requirement took, Kuhn's
    # algorithm below takes exactly those (no augmenting path is ever needed): the usual case.
    first: dict[int, int] = {}
    for i, row in enumerate(edges):
        if row:
            if row[0] in first.values():
                break
            first[i] = row[0]
    else:
        return RequirementResult([r for i, r in enumerate(requirements) if i not in first], first)
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(requirements)):
        augment(i, set())
    matched = {i: j for j, i in owner.items()}
    unmatched = [req for i, req in enumerate(requirements) if i not in matched]
    return RequirementResult(unmatched, matched)


def match_forbidden(
    forbidden: Sequence[ToolRequirement], calls: Sequence[TrajectoryToolCall]
) -> RequirementResult:
    """Forbidden requirements some call satisfies (``unmatched`` holds the violated ones)."""
    violated: list[ToolRequirement] = []
    first: dict[int, int] = {}
    for i, req in enumerate(forbidden):
        for j, call in enumerate(calls):
            if call_matches(req, call):
                violated.append(req)
                first[i] = j
                break
    return RequirementResult(violated, first)


def match_in_order(
    requirements: Sequence[ToolRequirement], calls: Sequence[TrajectoryToolCall]
) -> int:
    """How many requirements, in label order, a subsequence of the calls satisfies (greedy).

    Calls satisfy requirements as in :func:`match_required` (an errored call only with
    ``allow_error``).
    """
    position = 0
    for done, req in enumerate(requirements):
        while position < len(calls) and not call_satisfies(req, calls[position]):
            position += 1
        if position == len(calls):
            return done
        position += 1
    return len(requirements)


@dataclass(frozen=True)
class AssertionResult:
    """Outcome of one state assertion."""

    passed: bool
    found: bool
    actual: Any


def _select(assertion: StateAssertion, state: Mapping[str, Any]) -> tuple[bool, Any]:
    if assertion.language == "jmespath":
        try:
            value = _search(assertion.expr, dict(state))
        except jmespath.exceptions.JMESPathError as exc:
            raise MatcherError(f"JMESPath {assertion.expr!r} is invalid: {exc}") from exc
        return value is not None, value
    try:
        matches = _jsonpath(assertion.expr).find(dict(state))
    except (JsonPathLexerError, JsonPathParserError, Exception) as exc:
        raise MatcherError(f"JSONPath {assertion.expr!r} is invalid: {exc}") from exc
    if not matches:
        return False, None
    if len(matches) == 1:
        return True, matches[0].value
    return True, [m.value for m in matches]


def _compare(op: str, actual: Any, expected: Any) -> bool:
    try:
        if op == "eq":
            return _equal(actual, expected)
        if op == "ne":
            return not _equal(actual, expected)
        if op == "gt":
            return bool(actual > expected)
        if op == "ge":
            return bool(actual >= expected)
        if op == "lt":
            return bool(actual < expected)
        if op == "le":
            return bool(actual <= expected)
        if op == "contains":
            if isinstance(actual, str):
                return isinstance(expected, str) and expected in actual
            if isinstance(actual, list):
                return any(deep_subset(expected, item) for item in actual)
            if isinstance(actual, dict):
                return (
                    expected in actual
                    if isinstance(expected, str)
                    else deep_subset(expected, actual)
                )
            return False
    except TypeError:
        return False
    raise MatcherError(f"unknown assertion op {op!r}")


def evaluate_assertion(assertion: StateAssertion, state: Mapping[str, Any]) -> AssertionResult:
    """Select a value from the final state and compare it.

    Raises:
        MatcherError: The expression does not parse.
    """
    found, actual = _select(assertion, state)
    if assertion.op == "exists":
        return AssertionResult(found, found, actual)
    if assertion.op == "absent":
        return AssertionResult(not found, found, actual)
    if not found:
        return AssertionResult(assertion.op == "ne" and assertion.value is not None, False, None)
    return AssertionResult(_compare(assertion.op, actual, assertion.value), True, actual)
