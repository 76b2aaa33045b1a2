"""Tool-rename migrations: `renames.toml` maps old names to new, :func:`migrate_cases` applies it.

A rename is a dataset change like any other: it produces the next version with a changelog line,
so a tool refactor never shows up as an agent regression or as a rule that can no longer fail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from casework.dataset._migrate_consistency import inconsistencies, line_of
from casework.dataset._migrate_model import ArgumentCollision, MigrationResult, RenameMap
from casework.dataset.check import contradictory_tools
from casework.dataset.jsonl import problems_from_validation
from casework.dataset.lock import dataset_lock
from casework.dataset.store import load_dataset, release
from casework.dataset.tools import ToolDecl, declared_tools
from casework.decoding import decode_utf8, load_toml
from casework.errors import InputError, InputErrors, Problem
from casework.project import Project
from casework.schema import (
    Case,
    GoldenAction,
    Injection,
    Label,
    LabelRecord,
    ToolCall,
    ToolFixture,
    ToolRequirement,
    Turn,
    VersionRecord,
)

__all__ = [
    "ArgumentCollision",
    "MigrationResult",
    "RenameMap",
    "load_renames",
    "migrate_cases",
    "migrate_dataset",
]


def load_renames(path: Path, shown: str, tools: Mapping[str, ToolDecl]) -> RenameMap:
    """Read and validate a rename map against the declared tools.

    Raises:
        InputErrors: Bad TOML, unknown keys, or a rename whose target tool (or argument) the agent
            does not declare — every problem located by line.
    """
    if not path.is_file():
        raise InputError(shown, None, None, "rename map not found")
    raw = path.read_bytes()
    data = load_toml(raw, shown)
    text = decode_utf8(raw, shown)
    try:
        renames = RenameMap.model_validate(data)
    except ValidationError as exc:
        InputErrors.raise_if_any(problems_from_validation(exc, shown, None))
        raise
    problems: list[Problem] = []
    for old, new in renames.tools.items():
        if new not in tools:
            problems.append(
                Problem(
                    shown,
                    line_of(text, old, "tools"),
                    f"tools.{old}",
                    "rename target is not a declared tool",
                    new,
                    has_got=True,
                )
            )
    for tool, mapping in renames.arguments.items():
        table = f"arguments.{tool}"
        if tool not in tools:
            problems.append(
                Problem(
                    shown,
                    line_of(text, tool, "arguments"),
                    table,
                    "not a declared tool",
                    tool,
                    has_got=True,
                )
            )
            continue
        declared = tools[tool].argument_names
        for old, new in mapping.items():
            if declared is not None and new not in declared:
                problems.append(
                    Problem(
                        shown,
                        line_of(text, old, table),
                        f"{table}.{old}",
                        f"rename target is not an argument of '{tool}'",
                        new,
                        has_got=True,
                    )
                )
    InputErrors.raise_if_any(problems)
    return renames


def _plain_clash(label: Label) -> set[str]:
    """Tools required and forbidden with no argument matchers: a label the schema refuses.

    So a contradiction the label already had (forbidding every call of a tool it requires with
    arguments) is refused as the renames' once they make it plain, instead of failing validation.
    """
    required = {t.name for t in label.required_tools if not t.arguments}
    return required & {t.name for t in label.forbidden_tools if not t.arguments}


class _Migrator:
    def __init__(self, renames: RenameMap) -> None:
        self.r = renames
        self.result = MigrationResult([])
        self.case_id = ""
        """The case being migrated, named by an argument collision."""

    def name(self, old: str) -> str:
        new = self.r.tool(old)
        if new != old:
            self.result.tool_places[f"{old}->{new}"] += 1
        return new

    def args(self, tool_new: str, args: Mapping[str, Any]) -> dict[str, Any]:
        # Argument tables are keyed by the tool's new name, which is looked up as it is: renames
        # apply once, so a new name that is also an old one is not renamed again.
        mapping = self.r.arguments.get(tool_new, {})
        out: dict[str, Any] = {}
        sources: dict[str, list[str]] = {}
        for key, value in args.items():
            new = mapping.get(key, key)
            if new != key:
                self.result.argument_places[f"{tool_new}.{key}->{new}"] += 1
            sources.setdefault(new, []).append(key)
            out[new] = value
        self.result.collisions.extend(
            ArgumentCollision(self.case_id, tool_new, new, tuple(keys))
            for new, keys in sources.items()
            if len(keys) > 1
        )
        return out

    def requirement(self, req: ToolRequirement) -> ToolRequirement:
        name = self.name(req.name)
        return req.model_copy(
            update={"name": name, "arguments": self.args(name, dict(req.arguments))}
        )

    def requirements(self, reqs: Sequence[ToolRequirement]) -> list[ToolRequirement]:
        # Two tools renamed to one make equal entries: keep one.
        out: list[ToolRequirement] = []
        for req in reqs:
            new = self.requirement(req)
            if new not in out:
                out.append(new)
        return out

    def label_record(self, record: LabelRecord) -> LabelRecord:
        self.case_id = record.case_id
        return LabelRecord.model_validate(
            record.model_copy(
                update={
                    "required_tools": self.requirements(record.required_tools),
                    "forbidden_tools": self.requirements(record.forbidden_tools),
                }
            ).model_dump(by_alias=True)
        )

    def fixture(self, fx: ToolFixture) -> ToolFixture:
        name = self.name(fx.tool)
        return fx.model_copy(update={"tool": name, "match": self.args(name, fx.match)})

    def call(self, call: ToolCall) -> ToolCall:
        name = self.name(call.name)
        return call.model_copy(update={"name": name, "arguments": self.args(name, call.arguments)})

    def turn(self, turn: Turn) -> Turn:
        if not turn.tool_calls:
            return turn
        return turn.model_copy(update={"tool_calls": [self.call(c) for c in turn.tool_calls]})

    def golden(self, action: GoldenAction) -> GoldenAction:
        name = self.name(action.name)
        return action.model_copy(
            update={"name": name, "arguments": self.args(name, action.arguments)}
        )

    def offered(self, tools: list[str] | None) -> list[str] | None:
        if tools is None:
            return None
        return list(dict.fromkeys(self.name(t) for t in tools))  # two renamed to one: listed once

    def injection(self, inj: Injection) -> Injection:
        if inj.location.startswith("tool:"):
            return inj.model_copy(update={"location": "tool:" + self.name(inj.location[5:])})
        return inj

    def case(self, case: Case) -> Case:
        self.case_id = case.id
        sit = case.situation
        new_sit = sit.model_copy(
            update={
                "turns": [self.turn(t) for t in sit.turns],
                "fixtures": [self.fixture(f) for f in sit.fixtures],
                "injected": [self.injection(i) for i in sit.injected],
                "tools": self.offered(sit.tools),
            }
        )
        oracle = case.oracle.model_copy(
            update={"golden_actions": [self.golden(a) for a in case.oracle.golden_actions]}
        )
        update: dict[str, Any] = {"situation": new_sit, "oracle": oracle}
        if case.label is not None:
            label = case.label.model_copy(
                update={
                    "required_tools": self.requirements(case.label.required_tools),
                    "forbidden_tools": self.requirements(case.label.forbidden_tools),
                }
            )
            had = set(contradictory_tools(case.label)) - _plain_clash(label)
            made = [t for t in contradictory_tools(label) if t not in had]
            if made:  # two tools renamed to one that the label both requires and forbids
                self.result.contradictions.extend((case.id, tool) for tool in made)
                return case
            update["label"] = label
        # Round-trip through validation so the migrated case obeys every schema rule.
        return Case.model_validate(case.model_copy(update=update).model_dump(by_alias=True))


def migrate_cases(
    cases: Sequence[Case], renames: RenameMap, labels: Sequence[LabelRecord] | None = None
) -> MigrationResult:
    """Apply a rename map to every case and raw label (renames apply once, not transitively)."""
    m = _Migrator(renames)
    out = []
    for case in cases:
        new = m.case(case)
        if new != case:
            m.result.cases_changed += 1
        out.append(new)
    m.result.cases = out
    if labels is not None:
        records = []
        for record in labels:
            new_record = m.label_record(record)
            m.result.labels_changed += new_record != record
            records.append(new_record)
        m.result.labels = records
    return m.result


def _merged_contradictions(
    result: MigrationResult, renames: RenameMap, path: Path, project: Project
) -> list[Problem]:
    """Cases the renames make require and forbid one tool (two tools renamed to one)."""
    shown = project.relative(path)
    text = path.read_text(encoding="utf-8")
    problems = []
    for case_id, tool in result.contradictions:
        sources = sorted(k for k, v in renames.tools.items() if v == tool)
        problems.append(
            Problem(
                shown,
                line_of(text, sources[0], "tools") if sources else None,
                f"tools.{sources[0]}" if sources else "tools",
                f"case '{case_id}' requires one of {', '.join([*sources, tool])} and forbids "
                f"another; renamed to one tool, the case would require and forbid '{tool}' "
                "(fix the case's label first)",
                tool,
                has_got=True,
            )
        )
    return problems


def migrate_dataset(
    project: Project, name: str, renames_path: Path, message: str, *, dry_run: bool = False
) -> tuple[MigrationResult, VersionRecord | None]:
    """Apply a rename map to the working tree of ``name`` (cases and raw labels) and release it.

    Labels still in the workbench are renamed by :func:`casework.labelling.migrate_labelling`,
    which calls this under the same lock.

    Returns:
        The migration result and the new release (``None`` when nothing changed or ``dry_run``).

    Raises:
        InputErrors: Bad rename map (including a rename to an undeclared tool), or renamed cases
            that would be inconsistent: a case requiring and forbidding one tool (two tools
            renamed to one), a call given one argument name twice, or any finding of
            `casework dataset check` the cases did not have before (an argument the renamed tool does not
            declare…). Each is located at its line of the rename map; nothing is written.
    """
    tools = declared_tools(project)
    renames = load_renames(renames_path, project.relative(renames_path), tools)
    with dataset_lock(project, name):
        dataset = load_dataset(project, name)
        result = migrate_cases(dataset.cases, renames, dataset.labels)
        pairs = [(a, b) for a, b in zip(dataset.cases, result.cases, strict=True) if a != b]
        InputErrors.raise_if_any(
            [
                *_merged_contradictions(result, renames, renames_path, project),
                *inconsistencies(result, pairs, renames, renames_path, project),
            ]
        )
        if dry_run or (result.cases_changed == 0 and result.labels_changed == 0):
            return result, None
        record = release(
            project, name, result.cases, message, changes=result.changelog(), labels=result.labels
        )
    return result, record
