"""The commands that used to switch modes on flags are groups of sub-commands.

`adjudicate list|export|import|apply`, `leakage review` (list) and `leakage decide`, and
`results show|list`: each has its own help, and the old flag spellings are usage errors (exit 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import click
import pytest
from click.testing import CliRunner, Result

from casework.cli import cli
from casework.cli.reference import walk_commands
from casework.schema import SPLITS, Split


def run(*args: str, project: Path | None = None) -> Result:
    prefix = ["--project", str(project)] if project is not None else []
    return CliRunner().invoke(cli, [*prefix, *args], prog_name="casework")


@pytest.mark.parametrize(
    ("command", "usage", "says"),
    [
        (
            ["adjudicate"],
            "casework adjudicate [OPTIONS] COMMAND [ARGS]...",
            ["apply", "export", "import", "list"],
        ),
        (["adjudicate", "list"], "casework adjudicate list [OPTIONS] DATASET", ["--format"]),
        (
            ["adjudicate", "export"],
            "casework adjudicate export [OPTIONS] DATASET",
            ["--out DIRECTORY", "--adjudicator"],
        ),
        (["adjudicate", "import"], "casework adjudicate import [OPTIONS] SHEETS...", []),
        (["adjudicate", "apply"], "casework adjudicate apply [OPTIONS] DATASET", ["-m, --message"]),
        (["leakage", "review"], "casework leakage review [OPTIONS] DATASET", ["--all", "--format"]),
        (
            ["leakage", "decide"],
            "casework leakage decide [OPTIONS] DATASET FLAG",
            ["--move ROW", "--keep", "--template", "--by", "--note"],
        ),
        (["results"], "casework results [OPTIONS] COMMAND [ARGS]...", ["list", "show"]),
        (["results", "show"], "casework results show [OPTIONS] RUN", ["--format"]),
        (["results", "list"], "casework results list [OPTIONS]", ["--format"]),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else "",
)
def test_help_of_each_subcommand(command: list[str], usage: str, says: list[str]) -> None:
    result = run(*command, "--help")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == f"Usage: {usage}"
    for text in says:
        assert text in result.stdout


def test_the_list_subcommands_take_no_decision_options() -> None:
    listing = run("leakage", "review", "--help").stdout
    for gone in ("--flag", "--move", "--keep", "--template"):
        assert gone not in listing
    assert "--list" not in run("results", "show", "--help").stdout
    assert "--export" not in run("adjudicate", "list", "--help").stdout


@pytest.mark.parametrize(
    ("command", "error"),
    [
        # The old mode-switching spellings.
        (["adjudicate", "refunds"], "Error: No such command 'refunds'."),
        (["adjudicate", "refunds", "--export", "out"], "Error: No such command 'refunds'."),
        (["adjudicate", "list", "refunds", "--apply"], "Error: No such option '--apply'."),
        (["results", "run-1"], "Error: No such command 'run-1'."),
        (["results", "--list"], "Error: No such option '--list'."),
        (["leakage", "review", "support", "--flag", "1"], "Error: No such option '--flag'."),
        # Missing arguments of the new sub-commands.
        (["adjudicate", "list"], "Error: Missing argument 'DATASET'."),
        (["adjudicate", "import"], "Error: Missing argument 'SHEETS...'."),
        (["adjudicate", "apply", "refunds"], "Error: Missing option '-m' / '--message'."),
        (["adjudicate", "export", "refunds"], "Error: Missing option '--out'."),
        (["results", "show"], "Error: Missing argument 'RUN'."),
        (["leakage", "decide", "support"], "Error: Missing argument 'FLAG'."),
        (
            ["leakage", "decide", "support", "one", "--keep"],
            "Error: Invalid value for 'FLAG': 'one' is not a valid integer.",
        ),
        # mine, forget and expire print with --format like every other command.
        (["dataset", "expire", "--output", "json"], "Error: No such option '--output'."),
        (
            ["dataset", "forget", "--email", "a@b.c", "--output", "json"],
            "Error: No such option '--output'.",
        ),
        (
            ["dataset", "expire", "--format", "yaml"],
            "Error: Invalid value for '--format': 'yaml' is not one of 'text', 'json'.",
        ),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else "",
)
def test_bad_usage_exits_2(command: list[str], error: str, tmp_path: Path) -> None:
    result = run(*command, project=tmp_path)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1] == error


def test_split_choices_come_from_the_schema() -> None:
    assert get_args(Split) == SPLITS == ("dev", "holdout", "smoke")
    found: dict[str, tuple[object, ...]] = {}
    for name, command in walk_commands(cli):
        for param in command.params:
            if param.name in ("split", "splits"):
                assert isinstance(param.type, click.Choice)
                found[name] = tuple(param.type.choices)
    expected: dict[str, tuple[object, ...]] = {
        name: SPLITS
        for name in (
            "casework dataset cases",
            "casework mine",
            "casework run",
            "casework judge labeller-check",
        )
    }
    expected["casework export adk"] = SPLITS
    expected["casework import adk"] = ("dev", "holdout")  # nothing is imported retired
    expected["casework export inspect-samples"] = SPLITS
    for name in (
        "casework import jsonl",
        "casework import inspect-samples",
        "casework import tau2",
        "casework import fncall",
    ):
        expected[name] = ("dev", "holdout")
    assert found == expected
