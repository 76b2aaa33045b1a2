"""The `casework` command line: each command parses, calls one library function, renders.

Library errors become one message on stderr here, in exactly one place (:class:`CaseworkGroup`):
exit 1 for bad input or a failed check, 2 for usage errors; an operating-system error (a folder
where a file belongs, no room) is the path and the reason, exit 1; tracebacks only with
``--debug``.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from casework import __version__
from casework.cli.context import AppState
from casework.errors import CaseworkError

__all__ = [
    "COMMAND_HELP",
    "COMMAND_MODULES",
    "COMMAND_TABLE",
    "CaseworkGroup",
    "cli",
    "main",
    "os_error_message",
]


class CaseworkGroup(click.Group):
    """A click group that renders :class:`CaseworkError` as a message and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the sub-command, turning casework errors into a message on stderr."""
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise  # the reader of the output went away: nothing to tell it
        except (CaseworkError, OSError) as exc:
            # An OSError: a file the command reads or writes is not what it should be (a folder
            # where a file belongs, no room, no permission): the path and the reason, no trace.
            state = ctx.find_object(AppState)
            if state is not None and state.debug:
                raise
            if isinstance(exc, CaseworkError):
                click.echo(exc.render(_flag_speller(self, ctx)), err=True)
                ctx.exit(exc.exit_code)
            click.echo(os_error_message(exc), err=True)
            ctx.exit(1)

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Commands in the order of :data:`COMMAND_MODULES` (the order of the CLI reference)."""
        return list(COMMAND_MODULES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Import the module holding ``cmd_name`` on first use."""
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            module = importlib.import_module(f"casework.cli.{COMMAND_MODULES[cmd_name]}")
            for command in module.COMMANDS:
                if command.name is not None and command.name not in self.commands:
                    self.add_command(command)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the commands with their short help from :data:`COMMAND_HELP`, importing none.

        The rows are those click's own listing makes from the loaded commands (none is hidden or
        deprecated; a test compares the two).
        """
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        # A bare Command with the same help shortens it as the real one would (click's own rule).
        rows = [
            (name, click.Command(name, help=COMMAND_HELP[name]).get_short_help_str(limit))
            for name in names
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _commands_under(command: click.Command) -> list[click.Command]:
    found = [command]
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            found += _commands_under(sub)
    return found


def _flag_speller(group: CaseworkGroup, ctx: click.Context) -> Callable[[str], str]:
    """Spell a library parameter name as the flag of the command that ran (``slice`` -> ``--slice``).

    Library errors name parameters, never flags; this is the one place that maps them back. A
    name matches an option by its flag (``--relabel-under`` for ``relabel_under``) or by its
    Python name, first among the parameters of the command that ran, then of any command (advice
    may point to another command's option); an unknown name is shown as it is, in backticks.
    """
    name = ctx.invoked_subcommand
    command = group.get_command(ctx, name) if name else None
    here = [p for c in (_commands_under(command) if command else []) for p in c.params]

    def everywhere() -> list[click.Parameter]:
        commands = [group.get_command(ctx, n) for n in group.list_commands(ctx)]
        return [p for c in commands if c for sub in _commands_under(c) for p in sub.params]

    def find(param: str, params: list[click.Parameter]) -> str | None:
        for p in params:
            opts = [*p.opts, *p.secondary_opts]
            if isinstance(p, click.Argument):
                if p.name == param:
                    return p.human_readable_name
            elif p.name == param or any(o.lstrip("-").replace("-", "_") == param for o in opts):
                return max(opts, key=len)
        return None

    def spell(param: str) -> str:
        return find(param, here) or find(param, everywhere()) or f"`{param}`"

    return spell


@click.group(cls=CaseworkGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="casework")
@click.option(
    "--project",
    "project_path",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Project folder (default: the nearest folder upwards holding casework.toml).",
)
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.pass_context
def cli(ctx: click.Context, project_path: Path | None, debug: bool) -> None:
    """casework: build and keep honest the evaluation datasets of tool-using LLM agents."""
    ctx.obj = AppState(project_path=project_path, debug=debug)


# Each command: the module that holds it and its one-line help, in the order of the reference.
# Explicit (no discovery); a module is imported only when one of its commands runs, and
# `casework --help` lists the commands from this table without importing any, so neither it nor
# `casework versions` pays for numpy, scipy, SQLAlchemy or the LLM SDK. tests/e2e check this table
# against each module's COMMANDS and tests/cli/test_lazy_cli.py the help texts against the commands'.
COMMAND_TABLE: dict[str, tuple[str, str]] = {
    "init": ("datasets", "Create a new eval project in FOLDER with a commented casework.toml."),
    "schema": ("datasets", "Print the JSON Schema of a file format, for editors and validators."),
    "check": (
        "datasets",
        "Check DATASET[@VERSION]: declared tools, stale rules, expired rows, synthetic cap, PII.",
    ),
    "release": (
        "datasets",
        "Release the working tree of DATASET as a new version (a no-op if unchanged).",
    ),
    "versions": ("datasets", "List the releases of DATASET, oldest first."),
    "diff": (
        "datasets",
        "Compare two versions A and B of DATASET (B defaults to the working tree).",
    ),
    "show": ("datasets", "Print case CASE_ID of DATASET[@VERSION] as JSON."),
    "cases": ("datasets", "List the cases of DATASET[@VERSION] matching the filters."),
    "migrate": ("datasets", "Apply tool and argument renames to DATASET and release the result."),
    "db": ("db", "Workbench database: status and migrations."),
    "label": (
        "labelling",
        "Blind labelling: assign rows, export sheets, import answers, release labels.",
    ),
    "adjudicate": (
        "labelling",
        "Settle disagreements: list them, export and import adjudication sheets, apply decisions.",
    ),
    "guideline": ("labelling", "Versioned labelling guidelines (guidelines/<slice>.md)."),
    "agreement": (
        "agreement",
        "Inter-rater agreement of DATASET[@VERSION] per slice and guideline version.",
    ),
    "mine": (
        "mining",
        "Mine production TRACES (files or folders) into scrubbed draft cases of a dataset.",
    ),
    "forget": (
        "mining",
        "Remove every row naming a customer (a deletion request) and release new versions.",
    ),
    "expire": ("mining", "Remove rows past their retain_until date and release new versions."),
    "shapes": (
        "authoring",
        "Failure shapes of production traces: build, list, show, and drift between weeks.",
    ),
    "author": (
        "author",
        "Generate cases for a shape along an axis (--shape, --axis, -n); review them; the gate.",
    ),
    "synth": (
        "synth",
        "Make synthetic variants of DATASET's seed cases and release them as a new version.",
    ),
    "llm": ("synth", "Check model endpoints and manage the response cache."),
    "leakage": (
        "leakage",
        "Find leakage: near-duplicates across splits, rows in prompts, rows in training corpora.",
    ),
    "run": (
        "run",
        "Run an agent on DATASET[@VERSION]: k independent trials per case, graded, logged, stored.",
    ),
    "results": ("run", "The results of runs: one run's metrics, or the list of runs."),
    "compare": (
        "run",
        "Pair RUN_BETTER with RUN_WORSE case by case: discrimination, inverted cases, paired test.",
    ),
    "retire": (
        "run",
        "Move cases that separate none of the compared systems to split smoke, as a new version.",
    ),
    "gate": (
        "run",
        "Decide a release from dataset checks and RUN's results; exit 1 with the reasons on failure.",
    ),
    "report": (
        "run",
        "Write one self-contained HTML report of RUN (charts, failing cases with evidence).",
    ),
    "judge": (
        "judge",
        "The LLM judge: certified on people's verdicts of its verdicts (see docs/judge.md).",
    ),
    "review": (
        "review",
        "Review queue: near-duplicate pairs and generated cases, decided one item at a time.",
    ),
    "interop": ("interop", "Import and export other eval tools' formats (Google ADK eval sets)."),
    "import-run": (
        "interop",
        "Import another tool's per-trial results FILE as a casework run log in runs/.",
    ),
    "import": (
        "interop",
        "Import labelled cases: JSONL with --map, Inspect samples, τ²-bench, function-calling rows.",
    ),
    "tools": (
        "interop",
        "Tool declarations from what a team already has: ADK tool uses, trace tool definitions.",
    ),
    "export": (
        "interop",
        "Send verdicts and cases to other tools: JUnit XML, OpenTelemetry, OpenInference, Inspect.",
    ),
    "serve": (
        "web",
        "Serve the labelling web app on the project's workbench (uvicorn; Ctrl+C stops it).",
    ),
    "users": (
        "web",
        "People of the web app: add them with roles, list, disable, send a fresh sign-in link.",
    ),
}

#: Which module holds each command (``casework.cli.<module>``).
COMMAND_MODULES: dict[str, str] = {name: module for name, (module, _) in COMMAND_TABLE.items()}

#: Each command's short help as ``casework --help`` lists it (its docstring's first paragraph).
COMMAND_HELP: dict[str, str] = {name: text for name, (_, text) in COMMAND_TABLE.items()}


def os_error_message(exc: OSError) -> str:
    """``path: reason.`` for an operating-system error (the path relative to here when inside)."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    names = [n for n in (exc.filename, exc.filename2) if isinstance(n, str | bytes | os.PathLike)]
    shown = []
    for name in names:
        path = Path(os.fsdecode(name))
        with contextlib.suppress(ValueError, OSError):
            path = path.resolve().relative_to(Path.cwd().resolve())
        shown.append(path.as_posix())
    where = " -> ".join(shown)
    return f"{where}: {reason}." if where else f"{reason}."


def main() -> None:
    """Entry point of the `casework` console script."""
    sys.exit(cli.main(prog_name="casework", standalone_mode=True))
