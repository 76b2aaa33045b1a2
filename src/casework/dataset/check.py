"""Dataset checks that need no run: undeclared or stale tools, contradictions, expired rows.

Entry point: :func:`check_dataset`, returning a :class:`CheckReport` the CLI and the gate read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Literal

from casework.dataset.catalogue import CatalogueError, CatalogueFiles, case_catalogue
from casework.dataset.state import state_ref_findings
from casework.dataset.tools import ToolDecl
from casework.errors import Hint, HintRenderer, hint_as_command, next_step
from casework.schema import Case, Label, ToolRequirement

__all__ = [
    "CheckReport",
    "DatasetChecks",
    "Finding",
    "check_contradictions",
    "check_dataset",
    "check_tools",
    "contradictory_tools",
    "expired_cases",
    "golden_tool_findings",
]

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    """One problem a check found.

    Attributes:
        check: Which check (`undeclared_tool`, `stale_forbidden_tool`, `unknown_argument`, `expired`…).
        severity: `error` fails `casework dataset check` and the gate; `warning` is shown only.
        case_id: The case concerned, if any.
        subject: What is wrong in it (a tool name, `tool.argument`, a date).
        message: A sentence for people.
        hint: The step that fixes it, as data (the CLI shows its command, the web app a link),
            or ``None``.
    """

    check: str
    severity: Severity
    case_id: str | None
    subject: str
    message: str
    hint: Hint | None = None

    def render(self, hint: HintRenderer | None = None) -> str:
        """``case:subject: message``, then the next step as ``hint`` spells it (none: left out)."""
        where = f"{self.case_id}:{self.subject}" if self.case_id else self.subject
        if self.hint is None or hint is None:
            return f"{where}: {self.message}"
        return f"{where}: {self.message.rstrip('.')}. {next_step(self.hint, hint)}"

    def __str__(self) -> str:
        return self.render(hint_as_command)


@dataclass(frozen=True)
class CheckReport:
    """Every finding of a check run, with what was checked."""

    dataset: str
    cases: int
    findings: list[Finding] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Figures reported beside the findings (the unsatisfiable share of each slice)."""

    @property
    def errors(self) -> list[Finding]:
        """Findings that fail the check."""
        return [f for f in self.findings if f.severity == "error"]

    @property
    def ok(self) -> bool:
        """No error-level finding."""
        return not self.errors


#: How findings name the tools a case is checked against: the agent's, or the case's own.
_DECLARED = "declared by the agent"
_OFFERED = "in the case's tool catalogue (situation.tools / tools_file)"


def _requirement_findings(
    case: Case,
    req: ToolRequirement,
    kind: str,
    tools: Mapping[str, ToolDecl],
    scope: str = _DECLARED,
) -> list[Finding]:
    if req.name not in tools:
        if kind == "forbidden":
            return [
                Finding(
                    "stale_forbidden_tool",
                    "error",
                    case.id,
                    req.name,
                    f"forbidden tool is not {scope}: the rule is stale and can never fail",
                    Hint("dataset migrate", why="to rename it (or remove the rule)"),
                )
            ]
        return [
            Finding(
                "undeclared_tool",
                "error",
                case.id,
                req.name,
                f"{kind} tool is not {scope}",
            )
        ]
    names = tools[req.name].argument_names
    if names is None:
        return []
    return [
        Finding(
            "unknown_argument",
            "error",
            case.id,
            f"{req.name}.{arg}",
            f"{kind} tool '{req.name}' declares no argument '{arg}'",
        )
        for arg in req.arguments
        if arg not in names
    ]


def _all_declared(case: Case, tools: Mapping[str, ToolDecl]) -> bool:
    """Whether every tool ``case`` names, and every argument its label matches, is declared.

    Exactly when :func:`_tool_findings` finds nothing in it (about 5 of `check`'s 21 µs a case
    went to building those findings' inputs, measured).
    """
    for fixture in case.situation.fixtures:
        if fixture.tool not in tools:
            return False
    for turn in case.situation.turns:
        for call in turn.tool_calls:
            if call.name not in tools:
                return False
    label = case.label
    if label is not None:
        for requirements in (label.required_tools, label.forbidden_tools):
            for req in requirements:
                decl = tools.get(req.name)
                if decl is None:
                    return False
                names = decl.argument_names
                if names is not None and req.arguments and not names.issuperset(req.arguments):
                    return False
    return True


def check_tools(
    cases: Sequence[Case], tools: Mapping[str, ToolDecl], scope: str = _DECLARED
) -> list[Finding]:
    """Every place a case names a tool (label, fixture, conversation) must be a declared tool."""
    out: list[Finding] = []
    for case in cases:
        if not _all_declared(case, tools):  # the usual case needs no findings built
            out += _tool_findings(case, tools, scope)
    return out


def _tool_findings(case: Case, tools: Mapping[str, ToolDecl], scope: str) -> list[Finding]:
    """:func:`check_tools` of one case, in full."""
    out: list[Finding] = []
    if case.label is not None:
        for req in case.label.required_tools:
            out.extend(_requirement_findings(case, req, "required", tools, scope))
        for req in case.label.forbidden_tools:
            out.extend(_requirement_findings(case, req, "forbidden", tools, scope))
    named = [
        *((f.tool, "fixture answers") for f in case.situation.fixtures),
        *((c.name, "conversation calls") for t in case.situation.turns for c in t.tool_calls),
    ]
    seen: set[str] = set()
    for tool, where in named:
        if tool not in tools and tool not in seen:
            seen.add(tool)
            out.append(
                Finding(
                    "undeclared_tool",
                    "error",
                    case.id,
                    tool,
                    f"{where} a tool the agent does not declare"
                    if scope == _DECLARED
                    else f"{where} a tool not {scope}",
                )
            )
    return out


def contradictory_tools(label: Label) -> list[str]:
    """Tools the label both requires and forbids: every call meeting the requirement is forbidden.

    That is the case when a forbidden entry names a required tool with no argument matchers (it
    forbids every call) or with exactly the required matchers — what a many-to-one rename makes.
    """
    out: list[str] = []
    for forbidden in label.forbidden_tools:
        for required in label.required_tools:
            if (
                required.name == forbidden.name
                and forbidden.arguments in ({}, required.arguments)
                and forbidden.name not in out
            ):
                out.append(forbidden.name)
    return out


def check_contradictions(cases: Sequence[Case]) -> list[Finding]:
    """Cases that require and forbid the same tool: no trajectory can pass them."""
    return [
        Finding(
            "contradictory_tools",
            "error",
            case.id,
            tool,
            "the label requires and forbids this tool, so no trajectory can pass "
            "(two tools renamed to one? fix the label)",
        )
        for case in cases
        if case.label is not None
        for tool in contradictory_tools(case.label)
    ]


def expired_cases(cases: Sequence[Case], today: date) -> list[Finding]:
    """Rows whose ``retain_until`` has passed: they must leave in the next change (`casework dataset expire`)."""
    return [
        Finding(
            "expired",
            "error",
            c.id,
            str(c.provenance.retain_until),
            "retention date has passed",
            Hint("dataset expire", why="to release a version without it"),
        )
        for c in cases
        if c.provenance.retain_until is not None and c.provenance.retain_until < today
    ]


class DatasetChecks:
    """The checks of :func:`check_dataset`, fed one case at a time (no case is kept).

    Findings come out grouped by check and, within a check, in case order, exactly as
    :func:`check_dataset` lists them.
    """

    #: The checks run, in report order.
    CHECKS = ("declared_tools", "contradictions", "retention")

    def __init__(
        self,
        tools: Mapping[str, ToolDecl],
        *,
        today: date,
        files: CatalogueFiles | None = None,
        root: Path | None = None,
        slice_tools: Mapping[str, Mapping[str, ToolDecl]] | None = None,
    ) -> None:
        self.tools = tools
        self.today = today
        self.files = files or CatalogueFiles(root)
        self.root = root
        """Project root: with it, shared states (`state_ref`, `state_patch`) are checked too."""
        self.slice_tools = dict(slice_tools or {})
        """Declared tools of slices served by a tool environment (its declarations)."""
        self._tool_findings: list[Finding] = []
        self._contradictions: list[Finding] = []
        self._expired: list[Finding] = []
        self._states: list[Finding] = []
        self._not_gradable: list[Finding] = []
        self._state_refs = 0
        self.cases = 0

    def add(self, case: Case) -> None:
        """Check one case."""
        self.cases += 1
        one = (case,)
        tools = self.slice_tools.get(case.slice, self.tools)
        self._tool_findings += self._case_tool_findings(case, tools)
        self._tool_findings += golden_tool_findings(case, self._golden_catalogue(case, tools))
        scoring = case.oracle.tau2
        if scoring is not None and scoring.lost:
            self._not_gradable.append(
                Finding(
                    "gradable",
                    "error",
                    case.id,
                    "oracle.tau2.lost",
                    "not gradable: nothing scores the part(s) "
                    f"{', '.join(scoring.lost)} of τ²'s reward basis "
                    f"({', '.join(scoring.reward_basis)})",
                )
            )
        if case.oracle.not_gradable is not None:
            self._not_gradable.append(
                Finding(
                    "gradable",
                    "error",
                    case.id,
                    "oracle.not_gradable",
                    f"not gradable: {case.oracle.not_gradable}",
                )
            )
        if case.label is not None:
            self._contradictions += check_contradictions(one)
        if case.provenance.retain_until is not None:
            self._expired += expired_cases(one, self.today)
        if self.root is not None and case.situation.state_ref is not None:
            self._state_refs += 1
            self._states += [
                Finding("state_ref", "error", case.id, field, message)
                for field, message in state_ref_findings(self.root, case)
            ]

    def _golden_catalogue(
        self, case: Case, tools: Mapping[str, ToolDecl]
    ) -> Mapping[str, ToolDecl]:
        """The tools golden actions may call: the case's own catalogue file when it names one."""
        situation = case.situation
        if not case.oracle.golden_actions or situation.tools_file is None:
            return tools
        try:
            return case_catalogue(case, tools, self.files)
        except CatalogueError:
            return tools  # the file's problem is reported once, by the declared_tools check

    def _case_tool_findings(self, case: Case, tools: Mapping[str, ToolDecl]) -> list[Finding]:
        situation = case.situation
        if situation.tools is None and situation.tools_file is None:
            return check_tools((case,), tools)
        try:
            offered = case_catalogue(case, tools, self.files)
        except CatalogueError as exc:
            return [Finding(exc.check, "error", case.id, exc.subject, exc.message)]
        return check_tools((case,), offered, _OFFERED)

    def merge(self, other: DatasetChecks) -> None:
        """Append the findings of ``other``, which checked the cases after this one's."""
        self._tool_findings += other._tool_findings
        self._contradictions += other._contradictions
        self._expired += other._expired
        self._states += other._states
        self._not_gradable += other._not_gradable
        self._state_refs += other._state_refs
        self.cases += other.cases

    def report(self, name: str) -> CheckReport:
        """Every finding so far, for dataset ``name``."""
        findings = [
            *self._tool_findings,
            *self._contradictions,
            *self._expired,
            *self._states,
            *self._not_gradable,
        ]
        # Listed only where it applied, so reports of datasets without shared states are as before.
        checks = [*self.CHECKS, "state_refs"] if self._state_refs else list(self.CHECKS)
        checks += ["gradable"] if self._not_gradable else []
        return CheckReport(name, self.cases, findings, checks)


def golden_tool_findings(case: Case, tools: Mapping[str, ToolDecl]) -> list[Finding]:
    """Golden actions (tool environments) must call declared tools with declared arguments."""
    out: list[Finding] = []
    for index, action in enumerate(case.oracle.golden_actions):
        where = f"oracle.golden_actions[{index}]"
        if action.name not in tools:
            out.append(
                Finding(
                    "undeclared_tool",
                    "error",
                    case.id,
                    action.name,
                    f"{where} calls a tool the agent (or the slice's environment) does not declare",
                )
            )
            continue
        names = tools[action.name].argument_names
        out += [
            Finding(
                "unknown_argument",
                "error",
                case.id,
                f"{action.name}.{arg}",
                f"{where}: tool '{action.name}' declares no argument '{arg}'",
            )
            for arg in action.arguments
            if names is not None and arg not in names
        ]
    return out


def check_dataset(
    name: str,
    cases: Iterable[Case],
    tools: Mapping[str, ToolDecl],
    *,
    today: date,
    files: CatalogueFiles | None = None,
) -> CheckReport:
    """Run the dataset checks that need neither a run nor the workbench.

    ``files`` reads the cases' own catalogue files (``situation.tools_file``); without it a case
    naming one gets a `tools_file` finding.
    """
    checks = DatasetChecks(tools, today=today, files=files)
    for case in cases:
        checks.add(case)
    return checks.report(name)
