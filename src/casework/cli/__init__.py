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
    "main",
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
        """Commands in the order of :data:`COMMAND_MODULES` (the order of the CLI reference).

        The old spellings are not listed (they are hidden); :meth:`get_command` still finds them.
        """
        return list(COMMAND_MODULES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Import the module holding ``cmd_name`` (a command or an old spelling) on first use."""
        where = COMMAND_MODULES.get(cmd_name) or ALIAS_MODULES.get(cmd_name)
        if cmd_name not in self.commands and where is not None:
            module = importlib.import_module(f"casework.cli.{where}")
            for command in [*getattr(module, "COMMANDS", []), *getattr(module, "ALIASES", [])]:
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
    Python name, first among the parameters of the command that ran, then of its group's other
    commands, then of any command (advice may point to another command's option); an unknown
    name is shown as it is, in backticks.
    """
    name = ctx.invoked_subcommand
    command = group.get_command(ctx, name) if name else None
    state = ctx.find_object(AppState)
    ran = state.ran.params if state is not None and state.ran is not None else []
    here = [*ran, *(p for c in (_commands_under(command) if command else []) for p in c.params)]

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
    # A command's usage lines are its own: what library calls made before it in this process
    # (a program or a test calling casework in-process) recorded is not printed as its usage.
    accounting = sys.modules.get("casework.llm.accounting")
    if accounting is not None:
        accounting.process_ledger().drain()
    ctx.call_on_close(_print_model_usage)


def _print_model_usage() -> None:
    """Each model role's usage line, on stderr, when the command called a model (else nothing).

    The ledger's module is loaded only by commands that build a model client, so commands that
    never do (most) pay nothing here. Stderr keeps `--format json` output parseable.
    """
    accounting = sys.modules.get("casework.llm.accounting")
    if accounting is None:
        return
    for line in accounting.process_ledger().drain():
        click.echo(line, err=True)


# Each command: the module that holds it and its one-line help, in the order of the reference.
# Explicit (no discovery); a module is imported only when one of its commands runs, and
# `casework --help` lists the commands from this table without importing any, so neither it nor
# `casework dataset versions` pays for numpy, scipy, SQLAlchemy or the LLM SDK. tests/test_startup.py
# checks this table against each module's COMMANDS and the help texts against the commands'.
COMMAND_TABLE: dict[str, tuple[str, str]] = {
    "init": ("init", "Create a new eval project in FOLDER with a commented casework.toml."),
    "schema": ("schema", "Print the JSON Schema of a file format, for editors and validators."),
    "dataset": (
        "dataset",
        "Datasets as released files: check, release, list, compare, show, filter, migrate, prune.",
    ),
    "label": (
        "label",
        "Blind labelling: assign rows, export sheets, import answers, progress, guidelines.",
    ),
    "agreement": (
        "agreement",
        "Inter-rater agreement of DATASET[@VERSION] per slice and guideline version.",
    ),
    "mine": (
        "mine",
        "Mine production TRACES (files or folders) into scrubbed draft cases of a dataset.",
    ),
    "shapes": (
        "shapes",
        "Failure shapes of production traces: build, list, show, drift; author cases along them.",
    ),
    "synth": (
        "synth",
        "Make synthetic variants of DATASET's seed cases and release them as a new version.",
    ),
    "leakage": (
        "leakage",
        "Find leakage: near-duplicates across splits, rows in prompts, rows in training corpora.",
    ),
    "run": (
        "run",
        "Run an agent on DATASET[@VERSION]: k independent trials per case, graded, logged, stored.",
    ),
    "results": (
        "results",
        "The results of runs: the list of runs, one run's metrics, two runs compared case by case.",
    ),
    "judge": ("judge", "The LLM judge: certified on people's verdicts of its verdicts."),
    "review": (
        "review",
        "Review queue: every human decision, decided one item at a time or on sheets.",
    ),
    "gate": (
        "gate",
        "Decide a release from dataset checks and RUN's results; exit 1 with the reasons on failure.",
    ),
    "report": (
        "report",
        "Write one self-contained HTML report of RUN (charts, failing cases with evidence).",
    ),
    "import": (
        "import_",
        "Bring in what other tools hold: cases, ADK eval sets, runs, tool declarations.",
    ),
    "export": (
        "export",
        "Send verdicts and cases to other tools: JUnit XML, OpenTelemetry, OpenInference, Inspect, ADK.",
    ),
    "serve": (
        "serve",
        "Serve the labelling web app on the project's workbench (uvicorn; Ctrl+C stops it).",
    ),
    "llm": ("llm", "Check model endpoints and manage the response cache."),
    "db": ("db", "Workbench database: status and migrations."),
}

#: Which module holds each command (``casework.cli.<module>``).
COMMAND_MODULES: dict[str, str] = {name: module for name, (module, _) in COMMAND_TABLE.items()}

#: Each command's short help as ``casework --help`` lists it (its docstring's first paragraph).
COMMAND_HELP: dict[str, str] = {name: text for name, (_, text) in COMMAND_TABLE.items()}

#: The old top-level spellings (hidden for one release; each prints where it moved) and the
#: module that holds each, in that module's ``ALIASES``.
ALIAS_MODULES: dict[str, str] = {
    **dict.fromkeys(
        ("check", "release", "versions", "diff", "show", "cases", "migrate"), "dataset"
    ),
    "retire": "_dataset_retire",
    "forget": "_dataset_erasure",
    "expire": "_dataset_erasure",
    "adjudicate": "label",
    "guideline": "label",
    "author": "shapes",
    "compare": "results",
    "interop": "import_",
    "import-run": "import_",
    "tools": "import_",
    "users": "serve",
}


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
