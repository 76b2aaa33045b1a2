"""Whether renamed cases stay consistent: what `migrate` refuses beyond the rename map itself.

Entry point: :func:`inconsistencies`, every problem located at the line of `renames.toml` at fault.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path

from casework.dataset._migrate_model import MigrationResult, RenameMap
from casework.dataset.catalogue import CatalogueFiles
from casework.dataset.check import DatasetChecks, Finding
from casework.dataset.tools import ToolDecl, declared_tools, environment_tools
from casework.errors import Problem
from casework.project import Project
from casework.schema import Case

__all__ = ["inconsistencies", "line_of"]


def line_of(text: str, key: str, table: str) -> int | None:
    """Line of ``key`` inside ``[table]``, or of the header ``[table.key]`` itself."""
    current = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line.startswith("[") and line.strip("[] ") == f"{table}.{key}":
            return number
        if line.startswith("["):
            current = line.strip("[] ")
            continue
        if current == table and line.split("=")[0].strip().strip('"') == key:
            return number
    return None


def _check_tools(
    project: Project,
) -> tuple[Mapping[str, ToolDecl], dict[str, dict[str, ToolDecl]]]:
    """The tools `casework dataset check` checks cases against: the agent's, or its tool environments'."""
    run = project.config.run
    if not (run.environment or run.environments):
        return declared_tools(project), {}
    default, per_slice = environment_tools(project)
    return (default if default is not None else declared_tools(project)), per_slice


#: Checks whose finding names a tool (renamed with it); `unknown_argument` names `tool.argument`.
_TOOL_SUBJECTS = frozenset({"undeclared_tool", "stale_forbidden_tool", "contradictory_tools"})


def _names(case: Case) -> set[str]:
    return case.tool_names() | {a.name for a in case.oracle.golden_actions}


def _tool_of(finding: Finding, names: set[str]) -> tuple[str, str | None]:
    """The tool a finding names and, for `unknown_argument`, the argument (tool names hold dots)."""
    if finding.check == "unknown_argument":
        tools = [t for t in names if finding.subject.startswith(t + ".")]
        if tools:
            tool = max(tools, key=len)
            return tool, finding.subject[len(tool) + 1 :]
    return finding.subject, None


def _translated(finding: Finding, case: Case, renames: RenameMap) -> tuple[str, str]:
    """The ``(check, subject)`` a finding of the unmigrated case takes through the renames."""
    if finding.check in _TOOL_SUBJECTS:
        return finding.check, renames.tool(finding.subject)
    if finding.check == "unknown_argument":
        tool, arg = _tool_of(finding, _names(case))
        if arg is not None:
            new = renames.tool(tool)
            return finding.check, f"{new}.{renames.arguments.get(new, {}).get(arg, arg)}"
    return finding.check, finding.subject


def _new_findings(
    pairs: Sequence[tuple[Case, Case]], renames: RenameMap, project: Project
) -> list[tuple[Case, Finding]]:
    """Findings of `casework dataset check` on the migrated cases that their originals did not have.

    Each original finding counts once, under the name the renames give it: a rename may fix or
    keep a finding, never add one.
    """
    if not pairs:
        return []
    tools, slice_tools = _check_tools(project)

    def findings(cases: list[Case]) -> dict[str, list[Finding]]:
        # The earliest date: renames change no retention finding; shared states (root) neither.
        checks = DatasetChecks(
            tools, today=date.min, files=CatalogueFiles(project.root), slice_tools=slice_tools
        )
        for case in cases:
            checks.add(case)
        by_case: dict[str, list[Finding]] = {}
        for finding in checks.report("").findings:
            by_case.setdefault(finding.case_id or "", []).append(finding)
        return by_case

    before = findings([old for old, _ in pairs])
    after = findings([new for _, new in pairs])
    out: list[tuple[Case, Finding]] = []
    for old, _ in pairs:
        had = Counter(_translated(f, old, renames) for f in before.get(old.id, []))
        for finding in after.get(old.id, []):
            key = (finding.check, finding.subject)
            if had[key] > 0:
                had[key] -= 1
            else:
                out.append((old, finding))
    return out


def _cases(ids: Sequence[str]) -> str:
    """``case 'a'``, ``cases 'a' and 'b'``, ``cases 'a', 'b', 'c' and 4 more``."""
    quoted = [f"'{i}'" for i in dict.fromkeys(ids)]
    if len(quoted) == 1:
        return f"case {quoted[0]}"
    if len(quoted) <= 3:
        return f"cases {', '.join(quoted[:-1])} and {quoted[-1]}"
    return f"cases {', '.join(quoted[:3])} and {len(quoted) - 3} more"


def inconsistencies(
    result: MigrationResult,
    pairs: Sequence[tuple[Case, Case]],
    renames: RenameMap,
    path: Path,
    project: Project,
) -> list[Problem]:
    """What the renames would break, located at the rename that breaks it (grouped by cases).

    A call given one argument name twice loses a value; a case that `casework dataset check` would
    newly fail (an argument the renamed tool does not declare, a tool its own catalogue lacks)
    is not a consistent migration. Both come from many-to-one renames mostly.
    """
    shown = project.relative(path)
    text = path.read_text(encoding="utf-8")
    grouped: dict[tuple[int | None, str, str, str], list[str]] = {}
    for c in result.collisions:
        table = renames.arguments.get(c.tool, {})
        renamed = [s for s in c.sources if table.get(s, s) != s]
        where = f"arguments.{c.tool}"
        field = f"{where}.{renamed[0]}" if renamed else where
        line = line_of(text, renamed[0], where) if renamed else line_of(text, c.tool, "arguments")
        message = (
            f"would call '{c.tool}' with {' and '.join(repr(s) for s in c.sources)} renamed to "
            f"one argument '{c.argument}', losing a value (fix the cases or the renames)"
        )
        grouped.setdefault((line, field, message, c.argument), []).append(c.case_id)
    for old, finding in _new_findings(pairs, renames, project):
        tool, _ = _tool_of(finding, _names(old) | {renames.tool(t) for t in _names(old)})
        sources = sorted(o for o, n in renames.tools.items() if n == tool and o in _names(old))
        hint = (
            f" (rename the argument under [arguments.{tool}] too)"
            if finding.check == "unknown_argument"
            else ""
        )
        message = f"would fail the dataset check after the rename: {finding.message}{hint}"
        if sources:
            key = (line_of(text, sources[0], "tools"), f"tools.{sources[0]}", message, tool)
        else:
            key = (line_of(text, tool, "arguments"), f"arguments.{tool}", message, tool)
        grouped.setdefault(key, []).append(old.id)
    return [
        Problem(shown, line, field, f"{_cases(ids)} {message}", got, has_got=True)
        for (line, field, message, got), ids in grouped.items()
    ]
