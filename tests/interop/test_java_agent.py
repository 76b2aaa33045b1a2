"""A non-Python agent end to end: the example Java agent compiled with javac, its tools declared
with `tools_from = "cmd:java …"`, run under `casework run` over HTTP, verdicts exported as JUnit."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest
from click.testing import CliRunner, Result

from casework.cli import cli
from casework.dataset import declared_tools
from casework.project import load_project

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "java-agent"
JAVAC = shutil.which("javac")
JAVA = shutil.which("java")
PROXY_VARS = tuple(f"{p}_PROXY" for p in ("HTTP", "HTTPS", "ALL", "NO", "http", "https", "all"))
STARTUP_S = 20.0

pytestmark = pytest.mark.skipif(
    JAVAC is None or JAVA is None,
    reason="javac is not installed (Debian: apt-get install default-jdk-headless)",
)


def _first_line(stream: IO[str], timeout_s: float) -> str | None:
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(stream.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout_s)
    except queue.Empty:
        return None


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch copy of the example, compiled."""
    for var in ("CASEWORK_DB_URL", *PROXY_VARS):
        monkeypatch.delenv(var, raising=False)
    root = tmp_path / "java-agent"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("build", "runs", ".casework"))
    assert JAVAC is not None
    subprocess.run(
        [JAVAC, "-d", "build", "src/CaseworkAgent.java"], cwd=root, check=True, timeout=120
    )
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def agent_url(example: Path, tmp_path: Path) -> Iterator[str]:
    """The compiled agent serving on a free loopback port; always stopped."""
    assert JAVA is not None
    env = {k: v for k, v in os.environ.items() if k not in PROXY_VARS}
    log = (tmp_path / "java-agent.stderr").open("w", encoding="utf-8")
    proc = subprocess.Popen(
        [JAVA, "-cp", "build", "CaseworkAgent", "--port", "0"],
        cwd=example,
        stdout=subprocess.PIPE,
        stderr=log,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = _first_line(proc.stdout, STARTUP_S)
        errors = (tmp_path / "java-agent.stderr").read_text(encoding="utf-8")
        assert line is not None, f"the agent printed nothing in {STARTUP_S:g} s: {errors}"
        assert line.startswith("listening on http://127.0.0.1:"), (line, errors)
        yield line[len("listening on ") :].strip()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        log.close()


def _cli(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_the_agent_declares_its_tools_by_printing_them(example: Path) -> None:
    tools = declared_tools(load_project(example))
    assert sorted(tools) == ["get_order", "issue_refund"]
    assert tools["issue_refund"].argument_names == frozenset({"order_id"})
    check = _cli("dataset", "check", "orders")
    assert check.exit_code == 0, check.output


def test_the_java_agent_runs_end_to_end_and_its_verdicts_export_as_junit(
    example: Path, agent_url: str
) -> None:
    run = _cli(
        *("run", "orders", "--agent", agent_url, "-k", "2", "--no-judge"),
        *("--timeout", "30", "--format", "json"),
    )
    assert run.exit_code == 0, run.output
    summary = json.loads(run.stdout)
    assert (summary["trials"], summary["errors"], summary["passed"]) == (6, 0, 6)
    assert summary["agent_version"] == "orders-java-0.1"
    out = _cli("export", "junit", summary["run_id"], "-o", "junit.xml")
    assert out.exit_code == 0, out.output
    suites = ET.parse(example / "junit.xml").getroot()
    assert (suites.get("tests"), suites.get("failures")) == ("3", "0")
    names = sorted(tc.get("name", "") for tc in suites.iter("testcase"))
    assert names == ["ord-clarify", "ord-in-transit", "ord-refund"]
    props = {p.get("name"): p.get("value") for p in suites.find("testsuite/properties") or []}
    assert props["agent_version"] == "orders-java-0.1"
