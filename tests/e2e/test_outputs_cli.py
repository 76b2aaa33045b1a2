"""Outputs are data: every command's JSON is a registered, documented model, printed one way.

The walk fails on a command with ``--format json`` and no output model; the samples run commands
on a small project and validate what they print against the model's JSON Schema (jsonschema,
not pydantic: the schema `casework schema output KIND` prints is the contract users read).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import jsonschema
import pytest
from click.testing import CliRunner, Result
from pydantic import RootModel

from casework.cli import ALIAS_MODULES, cli
from casework.cli._output import OUTPUTS, output_model
from casework.cli.reference import walk_commands
from tests.runner.builders import make_project

SRC = Path(__file__).resolve().parents[2] / "src" / "casework"
GOOD = "python:tests.runner.sample_agents:good"
SLOPPY = "python:tests.runner.sample_agents:sloppy"

Invoke = Callable[..., Result]


def _prints_json(command: click.Command) -> bool:
    for p in command.params:
        if not isinstance(p, click.Option):
            continue
        if "--json" in p.opts:
            return True
        if "--format" in p.opts and isinstance(p.type, click.Choice) and "json" in p.type.choices:
            return True
    return False


JSON_COMMANDS = [n for n, c in walk_commands(cli) if _prints_json(c)]


def _every_command(
    group: click.Group, prefix: str, names: list[str]
) -> Iterator[tuple[str, click.Command]]:
    """Every command, hidden old spellings included (the reference's walk leaves them out)."""
    ctx = click.Context(group)
    for name in names:
        command = group.get_command(ctx, name)
        assert command is not None, name
        yield f"{prefix} {name}", command
        if isinstance(command, click.Group):
            yield from _every_command(command, f"{prefix} {name}", list(command.commands))


#: Old spellings print JSON too, for one release: through a registered model like every command.
OLD_JSON_COMMANDS = sorted(
    n
    for n, c in _every_command(
        cli, "casework", [*cli.list_commands(click.Context(cli)), *ALIAS_MODULES]
    )
    if _prints_json(c)
    and n not in JSON_COMMANDS
    # a copy of a moved command runs the new spelling's callback: its model is that one's
    and getattr(c.callback, "__wrapped__", c.callback)
    not in {command.callback for name, command in walk_commands(cli)}
)

#: Commands still printing a dict built in the CLI: the list may only shrink (a registered command
#: listed here fails the test too).
PENDING: set[str] = set()


def test_every_command_with_json_output_has_a_registered_model() -> None:
    assert len(JSON_COMMANDS) >= 40  # the walk sees the tree
    assert "casework adjudicate queue" in OLD_JSON_COMMANDS  # and the old spellings
    registered = {name for entry in OUTPUTS.values() for name in entry.commands}
    every = [*JSON_COMMANDS, *OLD_JSON_COMMANDS]
    missing = [name for name in every if name not in registered | PENDING]
    assert not missing, f"commands printing JSON without an output model: {missing}"
    assert not registered & PENDING, "a registered command is still listed as pending"
    # and no entry names a command that does not exist or prints no JSON
    assert registered <= set(every)


@pytest.mark.parametrize("kind", sorted(OUTPUTS))
def test_every_output_model_is_documented_and_printed_by_schema(kind: str) -> None:
    model = output_model(kind)
    schema = model.model_json_schema(by_alias=True)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert (model.__doc__ or "").strip(), f"{kind}: no docstring"
    parts = [schema, *schema.get("$defs", {}).values()]
    for part in parts:
        for field, prop in part.get("properties", {}).items():
            assert prop.get("description"), f"{kind}: field {field} has no description"
    if not issubclass(model, RootModel):  # a root model prints a list, a map or a file record
        assert schema["properties"]["output"]["const"] == kind
    result = CliRunner().invoke(cli, ["schema", "output", kind], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == schema
    flag = CliRunner().invoke(cli, ["schema", "--output", kind], catch_exceptions=False)
    assert json.loads(flag.stdout) == schema


def test_schema_output_lists_the_kinds_and_refuses_an_unknown_one() -> None:
    listing = CliRunner().invoke(cli, ["schema", "output"], catch_exceptions=False)
    assert listing.exit_code == 0
    assert "gate-decision: casework gate" in listing.stdout.splitlines()
    bad = CliRunner().invoke(cli, ["schema", "output", "gate"])
    assert bad.exit_code == 2
    assert "KIND: no command output of this kind" in bad.stderr and "Got 'gate'." in bad.stderr
    # the file formats still print as before
    case = CliRunner().invoke(cli, ["schema", "case"], catch_exceptions=False)
    assert json.loads(case.stdout)["title"] == "Case"


#: CLI modules whose commands all print through `emit` (the list may only grow).
CONVERTED = (
    "gate.py",
    "results.py",
    "run.py",
    "_dataset_retire.py",
    "_dataset_erasure.py",
    "agreement.py",
    "llm.py",
    "serve.py",
    "mine.py",
    "synth.py",
    "shapes.py",
    "_shapes_author.py",
    "import_.py",
    "export.py",
    "label.py",
    "judge.py",
    "leakage.py",
)


def test_only_the_output_module_prints_command_json() -> None:
    # `schema` prints JSON Schemas and `dataset show` a case record (`casework schema case`):
    # file formats, not command outputs.
    allowed = {"_output.py": "json.dumps("}
    for path in sorted((SRC / "cli").glob("*.py")):
        if path.name not in (*CONVERTED, *allowed):
            continue
        text = path.read_text(encoding="utf-8")
        for needle in ("emit_json(", "json.dumps("):
            uses = [m.start() for m in re.finditer(re.escape(needle), text)]
            if allowed.get(path.name) == needle:
                continue
            assert not uses, f"{path.name} prints JSON with {needle} instead of emit(model)"


def _validate(kind: str, result: Result) -> Any:
    assert result.exit_code in (0, 1), result.output
    data = json.loads(result.stdout)
    schema = output_model(kind).model_json_schema(by_alias=True)
    jsonschema.validate(data, schema)
    if not issubclass(output_model(kind), RootModel):
        assert data["output"] == kind and data["schema_version"] == 1
    return data


@pytest.fixture(scope="module")
def sampled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Invoke]:
    root = make_project(
        tmp_path_factory.mktemp("outputs") / "proj", config="[gate]\nmin_pass_rate = 0.6\n"
    )
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        return runner.invoke(cli, ["--project", str(root), *args], catch_exceptions=False)

    yield invoke


def test_commands_print_what_their_model_documents(
    sampled: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    invoke = sampled
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    checked = _validate("dataset-check", invoke("dataset", "check", "refunds", "--format", "json"))
    assert isinstance(checked, dict) and checked["dataset"] == "refunds@working"
    assert invoke("dataset", "release", "refunds", "-m", "first").exit_code == 0
    versions = _validate(
        "version-list", invoke("dataset", "versions", "refunds", "--format", "json")
    )
    assert [v["number"] for v in versions] == [1]
    ids = _validate("case-id-list", invoke("dataset", "cases", "refunds", "--format", "json"))
    assert ids
    _validate("dataset-diff", invoke("dataset", "diff", "refunds", "1", "--format", "json"))
    runs = {}
    for agent, version in ((GOOD, "v2"), (SLOPPY, "v1")):
        summary = _validate(
            "run-summary",
            invoke(
                "run",
                "refunds",
                "--agent",
                agent,
                "-k",
                "2",
                "--agent-version",
                version,
                "--format",
                "json",
            ),
        )
        assert isinstance(summary, dict)
        runs[version] = summary["run_id"]
    listed = _validate("run-listing", invoke("results", "list", "--format", "json"))
    assert {r["run_id"] for r in listed} == set(runs.values())
    shown = _validate("run-results", invoke("results", "show", runs["v2"], "--format", "json"))
    assert isinstance(shown, dict) and shown["groups"][0]["group"] == "all"
    _validate(
        "run-comparison",
        invoke("results", "compare", runs["v2"], runs["v1"], "--no-write", "--format", "json"),
    )
    _validate(
        "dataset-retire",
        invoke(
            "dataset",
            "retire",
            "refunds",
            "--runs",
            runs["v2"],
            "--runs",
            runs["v1"],
            "--dry-run",
            "--format",
            "json",
        ),
    )
    gate = _validate(
        "gate-decision",
        invoke("gate", "--run", runs["v2"], "--baseline", runs["v1"], "--format", "json"),
    )
    assert isinstance(gate, dict) and "corrected_pass_rate" not in gate


def test_review_commands_print_what_their_model_documents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    root = make_project(tmp_path / "proj", config='[agent]\nprompt_files = ["agent/prompt.md"]\n')
    (root / "agent" / "prompt.md").write_text("You help with refunds.\n", encoding="utf-8")
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        return runner.invoke(cli, ["--project", str(root), *args], catch_exceptions=False)

    (root / "guidelines").mkdir()
    for name in ("refunds", "SECRET-SLICE"):
        text = f"---\nversion: {name}-g1\n---\n# {name}\n"
        (root / "guidelines" / f"{name}.md").write_text(text, encoding="utf-8")
    cases = (root / "datasets" / "refunds" / "cases.jsonl").read_text(encoding="utf-8")
    drafts = tmp_path / "drafts.jsonl"
    drafts.write_text(cases.replace('"id": "', '"id": "gen-'), encoding="utf-8")
    assert invoke("dataset", "release", "refunds", "-m", "first").exit_code == 0
    added = _validate(
        "review-add",
        invoke(
            "review", "add-cases", "refunds", str(drafts), "--source", "gen", "--format", "json"
        ),
    )
    assert added["created"] and not added["existing"]
    listed = _validate("review-item-list", invoke("review", "list", "--format", "json"))
    assert [i["id"] for i in listed] == added["created"]
    first = added["created"][0]
    shown = _validate("review-item", invoke("review", "show", str(first), "--format", "json"))
    assert shown["kind"] == "generated-case" and shown["status"] == "open"
    decided = _validate(
        "review-item",
        invoke("review", "decide", str(first), "accept", "--reviewer", "rev-1", "--format", "json"),
    )
    assert decided["decision"] == "accept"
    synced = _validate("review-sync", invoke("review", "sync", "refunds", "--format", "json"))
    assert synced["dataset"] == "refunds"
    applied = _validate(
        "dataset-apply", invoke("dataset", "apply", "refunds", "-m", "gen", "--format", "json")
    )
    assert applied["version"] == 2 and len(applied["generated_case"]["released"]) == 1
    sheets = _validate(
        "review-sheets",
        invoke(
            "review",
            "export",
            "--kind",
            "disagreement",
            "--dataset",
            "refunds",
            "--out",
            str(tmp_path / "sheets"),
            "--format",
            "json",
        ),
    )
    assert sheets == {}
    guidelines = _validate(
        "guideline-list", invoke("label", "guideline", "list", "--format", "json")
    )
    assert [g["version"] for g in guidelines] == ["SECRET-SLICE-g1", "refunds-g1"]
    assert (
        _validate("guideline-gap-list", invoke("label", "guideline", "gaps", "--format", "json"))
        == []
    )
    assigned = _validate(
        "label-assign",
        invoke(
            "label",
            "assign",
            "refunds",
            "--labellers",
            "lab-1,lab-2",
            "--dry-run",
            "--format",
            "json",
        ),
    )
    assert assigned["dry_run"] and assigned["dataset"] == "refunds"
    status = _validate("label-status", invoke("label", "status", "refunds", "--format", "json"))
    assert status["dataset"] == "refunds"
    board = _validate(
        "label-dashboard", invoke("label", "status", "refunds", "--dashboard", "--format", "json")
    )
    assert {s["slice"] for s in board["slices"]} == {"refunds", "SECRET-SLICE"}
    agreement = _validate("agreement", invoke("agreement", "refunds", "--format", "json"))
    assert set(agreement["gate_eligibility"]) <= {"refunds", "SECRET-SLICE"}
    assert _validate("llm-cache-stats", invoke("llm", "cache", "stats", "--format", "json")) == {}
    assert _validate("user-list", invoke("serve", "users", "list", "--format", "json")) == []
    scan = _validate("leakage-scan", invoke("leakage", "scan", "refunds", "--format", "json"))
    assert scan["dataset"] == "refunds" and scan["rows"] == len(cases.splitlines()) + 1
    prompt = _validate("leakage-prompt", invoke("leakage", "prompt", "refunds", "--format", "json"))
    assert prompt["violations"] == 0
