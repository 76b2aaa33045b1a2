"""Help that teaches the map: every command's help ends with an example, every group links its page.

An example is checked the way a user would paste it: its words lead to the command it documents,
and click parses the rest of the line against that command's parameters.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from casework.cli import cli
from casework.cli.reference import walk_commands

ROOT = Path(__file__).resolve().parents[2]

COMMANDS = walk_commands(cli)
LEAVES = [(n, c) for n, c in COMMANDS if not isinstance(c, click.Group) or c.invoke_without_command]
GROUPS = [(n, c) for n, c in COMMANDS if isinstance(c, click.Group)]
#: Every entry of `casework --help`: each links the docs page of its noun.
TOP = [(n, c) for n, c in COMMANDS if n.count(" ") == 1]


def _help(name: str, command: click.Command) -> str:
    parent = click.Context(cli, info_name="casework", terminal_width=100, max_content_width=100)
    ctx = click.Context(command, info_name=name.split(" ", 1)[1], parent=parent)
    return command.get_help(ctx)


def _examples(name: str, command: click.Command) -> list[str]:
    """The example lines of a command's rendered help (the paragraph after ``Example:``)."""
    parts = _help(name, command).split("\n  Example:\n")
    assert len(parts) == 2, f"{name}: no Example in its help"
    lines = []
    for line in parts[1].splitlines():
        if not re.match(r"    (casework |[A-Z_]+=)", line):
            break
        lines.append(line.strip())
    assert lines, f"{name}: an empty Example"
    return lines


def test_the_walk_sees_the_map() -> None:
    names = {n for n, _ in LEAVES}
    assert {"casework dataset versions", "casework import adk", "casework serve"} <= names
    # the review queue's commands, registered from their own module, are checked like the rest
    assert {"casework review decide", "casework review import", "casework dataset apply"} <= names
    assert len(LEAVES) >= 60


@pytest.mark.parametrize(("name", "command"), LEAVES, ids=[n for n, _ in LEAVES])
def test_every_command_ends_its_help_with_an_example_that_parses(
    name: str, command: click.Command
) -> None:
    own = command.epilog or command.help or ""
    last = own.rstrip().split("\n\n")[-1]  # the last paragraph: a block click keeps as written
    assert last.startswith("\b\nExample:\n"), f"{name}: its help does not end with an Example"
    for line in last.splitlines()[2:]:
        assert line.strip().startswith(("casework ", "CASEWORK_")), line
    for line in _examples(name, command):
        words = shlex.split(line)
        while re.match(r"[A-Z_]+=", words[0]):
            words = words[1:]  # an environment variable set for the one command
        if ">" in words:
            words = words[: words.index(">")]
        assert words[0] == "casework"
        found: click.Command = cli
        ctx = click.Context(cli, info_name="casework")
        rest = words[1:]
        while isinstance(found, click.Group) and rest and rest[0] in found.list_commands(ctx):
            sub = found.get_command(ctx, rest[0])
            assert sub is not None
            ctx = click.Context(sub, info_name=rest[0], parent=ctx)
            found, rest = sub, rest[1:]
        assert found is command, f"{line!r} runs another command than {name}"
        # click parses the line (types, choices, required parameters) without running it
        command.make_context(name, list(rest), parent=ctx.parent)


@pytest.mark.parametrize(("name", "group"), TOP, ids=[n for n, _ in TOP])
def test_every_top_level_entry_links_its_docs_page(name: str, group: click.Command) -> None:
    pages = re.findall(r"docs/[a-z_-]+\.md", " ".join((group.help or "").split()))
    assert pages, f"{name}: its help names no docs page"
    for page in pages:
        assert (ROOT / page).is_file(), f"{name}: {page} does not exist"


@pytest.mark.parametrize(("name", "command"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_no_help_shows_a_raw_no_rewrap_marker(name: str, command: click.Command) -> None:
    """A `\\b` written in a raw docstring is shown as text and the table after it is rewrapped."""
    if name == "casework":
        return
    assert "\\b" not in _help(name, command), f"{name}: a literal \\b in its help"
