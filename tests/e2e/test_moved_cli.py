"""Old spellings: hidden, each prints one note naming its new spelling, then runs what it ran.

The table below is the complete list of moves; the CHANGELOG's table is written from it.
"""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from casework.cli import ALIAS_MODULES, cli
from casework.cli._moved import note_text
from casework.cli.reference import walk_commands

#: Old spelling -> new spelling, for a command that lives at both (the old runs the new's code).
MOVED: dict[str, str] = {
    **{name: f"dataset {name}" for name in ("check", "release", "versions", "diff", "show")},
    **{name: f"dataset {name}" for name in ("cases", "migrate", "retire", "forget", "expire")},
    **{f"guideline {name}": f"label guideline {name}" for name in ("list", "show", "bump", "gaps")},
    "compare": "results compare",
    "author": "shapes author",
    "author report": "shapes report",
    "interop import-adk": "import adk",
    "interop export-adk": "export adk",
    "import-run": "import run",
    "tools suggest": "import tools",
    **{f"users {name}": f"serve users {name}" for name in ("add", "list", "link", "disable")},
    "label dashboard": "label status --dashboard",
    "judge calibrate": "judge labeller-check",
}

#: Old spelling -> new spelling, for a decision command whose new home is the review queue or
#: `dataset apply`: the old one keeps its own implementation for one release.
DECISIONS: dict[str, str] = {
    "adjudicate list": "review list --kind disagreement",
    "adjudicate queue": "review list --kind disagreement",
    "adjudicate export": "review export",
    "adjudicate import": "review import",
    "adjudicate decide": "review decide",
    "adjudicate apply": "dataset apply",
    "label release": "dataset apply",
    "leakage review": "review list --kind leakage-pair",
    "leakage decide": "review decide",
    "leakage resolve": "dataset apply",
    "author review": "review decide --decisions FILE",
    "judge verdicts import": "review import",
}


def _command(words: list[str]) -> click.Command:
    command: click.Command = cli
    ctx = click.Context(cli, info_name="casework")
    for word in words:
        assert isinstance(command, click.Group), f"{word}: not a group"
        found = command.get_command(ctx, word)
        assert found is not None, f"no command {' '.join(words)}"
        ctx = click.Context(found, info_name=word, parent=ctx)
        command = found
    return command


def _hidden_leaves(command: click.Command, prefix: str, hidden: bool) -> list[str]:
    hidden = hidden or command.hidden
    if not isinstance(command, click.Group):
        return [prefix] if hidden else []
    found = [prefix] if hidden and command.invoke_without_command else []
    ctx = click.Context(command)
    for name in command.list_commands(ctx) or list(command.commands):
        sub = command.get_command(ctx, name)
        if sub is not None:
            found += _hidden_leaves(sub, f"{prefix} {name}".strip(), hidden)
    return found


def test_the_tables_name_every_old_spelling_and_only_those() -> None:
    ctx = click.Context(cli)
    old: list[str] = []
    for name in [*cli.list_commands(ctx), *ALIAS_MODULES]:
        command = cli.get_command(ctx, name)
        assert command is not None
        for group_name, group in [(name, command)]:
            if isinstance(group, click.Group):
                for sub in group.commands.values():
                    # hidden sub-commands of visible groups are old spellings too
                    if sub.hidden and not group.hidden:
                        old += _hidden_leaves(sub, f"{group_name} {sub.name}", True)
        if command.hidden:
            old += _hidden_leaves(command, name, True)
    assert sorted(old) == sorted({*MOVED, *DECISIONS})


def test_old_spellings_are_hidden_from_help_and_the_reference() -> None:
    listed = {full.removeprefix("casework ") for full, _ in walk_commands(cli)}
    for old in [*MOVED, *DECISIONS]:
        assert old not in listed
    top = CliRunner().invoke(cli, ["--help"]).stdout
    for name in ALIAS_MODULES:
        assert f"\n  {name} " not in top


def _placeholder_args(command: click.Command) -> list[str]:
    """Values for the required parameters, enough for click to parse and run the command."""
    args: list[str] = []
    for param in command.params:
        if not param.required:
            continue
        value = "x"
        if isinstance(param.type, click.Choice):
            value = str(param.type.choices[0])
        elif isinstance(param.type, click.types.IntParamType | click.types.FloatParamType):
            value = "1"
        if isinstance(param, click.Option):
            args += [param.opts[0], value]
        else:
            args.append(value)
    return args


def _words(spelling: str) -> tuple[list[str], list[str]]:
    """(command words, flags) of a spelling such as ``label status --dashboard``."""
    words = spelling.split()
    flags = [w for w in words if w.startswith("-")]
    return [w for w in words[: len(words) - len(flags)] if not w.startswith("-")], flags


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_spelling_notes_the_new_one_and_runs_the_same_thing(
    old: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no project here: each run ends in the same located error
    new_words, flags = _words(MOVED[old])
    command = _command(new_words)
    args = _placeholder_args(command)
    runner = CliRunner()
    before = runner.invoke(cli, [*new_words, *args, *flags])
    after = runner.invoke(cli, [*old.split(), *args])
    note = note_text(old, MOVED[old]) + "\n"
    assert after.stderr == note + before.stderr
    assert (after.stdout, after.exit_code) == (before.stdout, before.exit_code)
    assert before.exit_code != 0 and "casework.toml" in before.stderr
    # the old spelling's code is the new one's, not a copy that could drift (three keep a thin
    # callback of their own over the same function: the old `author` group, the dashboard, and
    # `judge calibrate`, whose messages name the command that ran)
    old_command = _command(old.split())
    if old not in {"author", "label dashboard", "judge calibrate"}:
        inner = getattr(old_command.callback, "__wrapped__", None)
        assert inner is command.callback or old_command.callback is command.callback
        assert old_command.params == command.params


@pytest.mark.parametrize("old", sorted(DECISIONS))
def test_a_decision_commands_old_spelling_notes_where_deciding_went(
    old: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    command = _command(old.split())
    assert command.hidden or _command(old.split()[:-1]).hidden
    result = CliRunner().invoke(cli, [*old.split(), *_placeholder_args(command)])
    first, _, rest = result.stderr.partition("\n")
    assert first == note_text(old, DECISIONS[old])
    assert result.exit_code == 1 and "casework.toml" in rest
    assert "note:" not in rest


def test_a_group_that_acts_notes_once_for_itself_and_once_for_a_sub_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    itself = CliRunner().invoke(cli, ["author", "--shape", "s", "--axis", "a"])
    assert itself.stderr.count("note:") == 1
    assert itself.stderr.startswith(note_text("author", "shapes author"))
    sub = CliRunner().invoke(cli, ["author", "report"])
    assert sub.stderr.count("note:") == 1
    assert sub.stderr.startswith(note_text("author report", "shapes report"))
