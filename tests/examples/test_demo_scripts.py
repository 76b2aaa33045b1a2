"""`make demo` is the main job in order and short; `make tour` keeps every station; neither sleeps."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from casework.cli import cli

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "scripts" / "demo.sh"
TOUR = ROOT / "scripts" / "tour.sh"
SCRATCH = ROOT / "scripts" / "_scratch.sh"

#: The main job, in the order a newcomer sees it: each entry is the start of one shown command.
MAIN_JOB = [
    "casework dataset release refunds",
    "casework dataset expire",
    "casework label assign refunds",
    "casework label export refunds",
    "casework review sync refunds",
    "casework review export --kind disagreement --dataset refunds",
    "python3 demo/simulated_labellers.py sheets",
    "casework label import",
    "casework review import",
    "casework dataset apply refunds",
    "casework agreement refunds",
    "casework leakage scan refunds",
    "casework review sync refunds",
    "casework dataset apply refunds",
    "casework leakage scan refunds",
    "casework run refunds --agent python:agents.refunds_agent:good",
    "casework run refunds --agent python:agents.refunds_agent:degraded",
    "casework results show",
    "casework gate --run",
    "casework report",
]


def _shown(script: str) -> list[tuple[str, str]]:
    """The (helper, command) of each `step` / `fails` line, the command as the script shows it."""
    shown = []
    for match in re.finditer(
        r'^\s*(step|fails) "(?:[^"\\]|\\.)*"((?:[^\n]*\\\n)*[^\n]*)', script, re.M
    ):
        words = shlex.split(match.group(2).replace("\\\n", " "))
        if words[:2] == ["bash", "-c"]:  # a command piped through tee: show what it runs
            words = shlex.split(words[2].split("|", 1)[0])
        shown.append((match.group(1), " ".join(words)))
    return shown


def test_the_demo_shows_the_main_job_in_order() -> None:
    commands = [command for _, command in _shown(DEMO.read_text())]
    position = 0
    for expected in MAIN_JOB:
        found = [i for i in range(position, len(commands)) if commands[i].startswith(expected)]
        assert found, f"{expected!r} missing from scripts/demo.sh after {commands[position - 1]!r}"
        position = found[0] + 1


def test_the_demo_expects_the_gate_to_fail_closed_and_says_why() -> None:
    gate = [
        (helper, command) for helper, command in _shown(DEMO.read_text()) if " gate " in command
    ]
    assert gate == [("fails", "casework gate --run $good --baseline $bad")]
    title = re.search(r'fails "([^"]*)" \\\n\s*casework gate', DEMO.read_text())
    assert title is not None and "not certified" in title.group(1)


def test_the_demo_leaves_the_long_stations_to_the_tour() -> None:
    demo = DEMO.read_text()
    for station in ("judge certify", "casework serve", "shapes build", "shapes author", "synth "):
        assert station not in demo
        assert station in TOUR.read_text()


def test_the_tour_keeps_every_station_in_order() -> None:
    tour = TOUR.read_text()
    headers = [int(n) for n in re.findall(r"^# --- (\d+)\. ", tour, re.M)]
    assert headers == list(range(1, 15))
    for station in (
        "casework dataset check refunds --pii",
        "casework mine traces",
        "casework label guideline bump",
        "casework leakage prompt refunds",
        "casework dataset migrate refunds",
        "casework judge certify",
        "casework results compare",
        "casework dataset retire refunds",
        "casework dataset check when2call",
        "casework dataset check bookings",
        "casework shapes drift",
        "casework shapes report",
        "casework import tau2 airline",
        "casework export junit",
    ):
        assert station in tour


@pytest.mark.parametrize("script", [DEMO, TOUR, SCRATCH], ids=["demo", "tour", "scratch"])
def test_no_step_waits_on_a_fixed_sleep(script: Path) -> None:
    assert re.search(r"\bsleep\b", script.read_text()) is None


@pytest.mark.parametrize(("target", "script"), [("demo", "demo.sh"), ("tour", "tour.sh")])
def test_make_runs_each_script(target: str, script: str) -> None:
    makefile = (ROOT / "Makefile").read_text()
    rule = re.search(rf"^{target}: .*\n\t(.*)$", makefile, re.M)
    assert rule is not None and rule.group(1).endswith(f"bash scripts/{script}")
    assert re.search(rf"^\.PHONY:.*\b{target}\b", makefile, re.M)


def _casework_commands(script: str) -> list[list[str]]:
    """The words after each `casework` the script runs (shell and the Python it embeds)."""
    found = [m.group(1).split() for m in re.finditer(r"\bcasework ([a-z][^\n|;)'`]*)", script)]
    for listed in re.findall(r'\["casework", ((?:"[^"]*",? ?)+)', script):
        found.append(re.findall(r'"([^"]*)"', listed))
    return found


@pytest.mark.parametrize("script", [DEMO, TOUR], ids=["demo", "tour"])
def test_scripts_use_no_moved_spelling(script: Path) -> None:
    """Every command the scripts run is a visible one: an old spelling would print its note."""
    ctx = click.Context(cli)
    checked = 0
    for words in _casework_commands(script.read_text()):
        group: click.Command = cli
        for word in words:
            if not isinstance(group, click.Group) or word.startswith(("-", "$")):
                break
            command = group.get_command(ctx, word)
            if command is None:
                break  # prose such as "casework says no", not a command
            assert not command.hidden, f"{script.name}: `casework {' '.join(words)}` is moved"
            group = command
            checked += 1
    assert checked > 20
