"""Progress bars stay off stdout and show only once inputs are checked; messages are proofread."""

from __future__ import annotations

import ast
import io
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from rich.console import Console

import casework
from casework.cli import cli
from casework.decoding import BadJSON, parse_json
from tests.runner.builders import make_project

GOOD = "python:tests.runner.sample_agents:good"
SRC = Path(casework.__file__).parent

Invoke = Callable[..., Result]


@pytest.fixture
def invoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Invoke:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    root = make_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    runner = CliRunner()
    return lambda *args: runner.invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """stderr as a terminal: what the progress bars draw there."""
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=100)
    monkeypatch.setattr("casework.cli._progress.err_console", console)
    return screen


@pytest.mark.parametrize(
    "args",
    [
        ("run", "refunds", "--agent", "python:no_such_module:agent", "-k", "1"),
        ("run", "nope", "--agent", GOOD, "-k", "1"),
        ("run", "refunds", "--agent", GOOD, "--concurrency", "0"),
        ("run", "--agent", GOOD),
    ],
)
def test_run_with_bad_inputs_prints_nothing_on_stdout_and_draws_no_bar(
    invoke: Invoke, terminal: io.StringIO, args: tuple[str, ...]
) -> None:
    result = invoke(*args)
    assert result.exit_code in (1, 2) and result.stderr
    assert result.stdout == ""
    assert terminal.getvalue() == ""


def test_run_draws_its_bar_on_a_terminal_stderr_and_never_on_stdout(
    invoke: Invoke, terminal: io.StringIO
) -> None:
    result = invoke("run", "refunds", "--agent", GOOD, "-k", "1")
    assert result.exit_code == 0, result.stderr
    assert "trials" in terminal.getvalue() and "5/5" in terminal.getvalue()
    summary, after = result.stdout.splitlines()  # the results only
    assert summary.startswith("run ") and after.startswith("next: casework results show")


def test_run_draws_no_bar_with_json_output(invoke: Invoke, terminal: io.StringIO) -> None:
    result = invoke("run", "refunds", "--agent", GOOD, "-k", "1", "--format", "json")
    assert result.exit_code == 0 and result.stdout.startswith("{")
    assert terminal.getvalue() == ""


def test_run_draws_no_bar_off_a_terminal(invoke: Invoke) -> None:
    result = invoke("run", "refunds", "--agent", GOOD, "-k", "1")  # CliRunner: no terminal
    assert result.exit_code == 0 and result.stderr == "" and "━" not in result.stdout


def _calls_named(tree: ast.AST, name: str) -> Iterator[ast.Call]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if called == name:
                yield node


def test_every_progress_bar_of_the_cli_draws_on_stderr() -> None:
    found = 0
    for path in sorted((SRC / "cli").glob("*.py")):
        for call in _calls_named(ast.parse(path.read_text(encoding="utf-8")), "Progress"):
            found += 1
            consoles = [k.value for k in call.keywords if k.arg == "console"]
            assert len(consoles) == 1, f"{path.name}:{call.lineno}: Progress without a console"
            assert isinstance(consoles[0], ast.Name) and consoles[0].id == "err_console", (
                f"{path.name}:{call.lineno}: Progress not on err_console"
            )
    assert found >= 2  # the scan sees the bars (stages and Bar at least)


#: A word written twice in a row ("at at"); a period after the second is an abbreviation list.
_DOUBLED = re.compile(r"\b([A-Za-z]{2,})\s+\1\b(?!\.)")
#: Doubled on purpose: click names the group "casework" before the command's own usage line.
_MEANT = {("cli/reference.py", "casework")}


def _message_strings(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Every string literal but docstrings; an f-string with its placeholders as ``{}``."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    inside_fstrings = {
        id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            yield (
                node.lineno,
                "".join(str(v.value) if isinstance(v, ast.Constant) else "{}" for v in node.values),
            )
        elif isinstance(node, ast.Constant) and id(node) not in docstrings | inside_fstrings:
            value = node.value
            if isinstance(value, str):
                yield node.lineno, value


def test_no_message_string_in_src_repeats_a_word() -> None:
    doubled = [
        f"{path.relative_to(SRC)}:{line}: {match.group(0)!r}"
        for path in sorted(SRC.rglob("*.py"))
        for line, text in _message_strings(ast.parse(path.read_text(encoding="utf-8")))
        for match in _DOUBLED.finditer(text)
        if (path.relative_to(SRC).as_posix(), match.group(1)) not in _MEANT
    ]
    assert doubled == []


def test_the_doubled_word_scan_finds_a_doubled_word() -> None:
    tree = ast.parse('x = f"invalid JSON: {m} starting at at column {c}"\n"""Doc the the."""\n')
    assert [m.group(0) for _, t in _message_strings(tree) for m in _DOUBLED.finditer(t)] == [
        "at at"
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": "x', "invalid JSON: Unterminated string starting at column 7"),
        ('{"a": "\x01"}', "invalid JSON: Invalid control character at column 8"),
        ('{"a": }', "invalid JSON: Expecting value at column 7"),
    ],
)
def test_invalid_json_messages_say_each_word_once(text: str, message: str) -> None:
    with pytest.raises(BadJSON) as info:
        parse_json(text)
    assert info.value.message == message
