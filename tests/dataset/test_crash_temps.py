"""A write killed with SIGKILL leaves its temp file under `.casework/tmp`, and the next command
removes it; a live writer's temp file is never taken for an abandoned one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from casework.atomic import PROJECT_TMP, atomic_writer, clean_temps

Run = Callable[..., Result]

#: Writes `states/big.json` through the atomic writer, says so, then waits to be killed.
WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from casework.atomic import atomic_writer

    with atomic_writer(Path(sys.argv[1])) as out:
        out.write(b"x" * (8 << 20))
        out.flush()
        print("writing", flush=True)
        time.sleep(60)
    """
)


def _outside_state(root: Path) -> set[Path]:
    return {
        p
        for p in root.rglob("*")
        if ".git" not in p.relative_to(root).parts and ".casework" not in p.parts
    }


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_killed_write_leaves_nothing_outside_casework_and_the_next_command_cleans_it(
    project_dir: Path, run_cli: Run
) -> None:
    before = _outside_state(project_dir)
    target = project_dir / "states" / "big.json"
    target.parent.mkdir()
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None and writer.stdout.readline() == "writing\n"
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    writer.stdout.close()
    assert _outside_state(project_dir) - before == {target.parent}  # the empty folder only
    (temp,) = (project_dir / PROJECT_TMP).glob("*.tmp")
    assert temp.name.startswith(".big.json.") and temp.stat().st_size == 8 << 20
    _age(temp, 120)  # past the minute a fresh temp file is given to be locked by its writer
    assert run_cli("dataset", "check", "refunds").exit_code == 0
    assert not temp.exists()
    assert not list((project_dir / PROJECT_TMP).rglob("*.tmp"))


def test_a_live_writers_temp_file_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "casework.toml").write_text('name = "t"\n', encoding="utf-8")
    target = tmp_path / "datasets" / "a.jsonl"
    folder = tmp_path / PROJECT_TMP
    with atomic_writer(target) as out:
        out.write(b"{}\n")
        (temp,) = folder.glob("*.tmp")
        _age(temp, 3600)
        assert clean_temps(folder) == []
    assert target.read_bytes() == b"{}\n" and not list(folder.glob("*.tmp"))


def test_a_fresh_unlocked_temp_file_waits_a_minute(tmp_path: Path) -> None:
    folder = tmp_path / "tmp" / "refunds"
    folder.mkdir(parents=True)
    temp = folder / ".cases.jsonl.0123456789ab.tmp"
    temp.write_bytes(b"half")
    assert clean_temps(tmp_path / "tmp") == []
    assert clean_temps(tmp_path / "tmp", now=time.time() + 61) == [temp]
    assert not temp.exists()


@pytest.mark.parametrize("inside", [True, False])
def test_temp_files_go_under_casework_tmp_only_inside_a_project(
    tmp_path: Path, inside: bool
) -> None:
    if inside:
        (tmp_path / "casework.toml").write_text('name = "t"\n', encoding="utf-8")
    target = tmp_path / "states" / "shop.json"
    seen: list[Path] = []
    with atomic_writer(target) as out:
        out.write(b"{}")
        seen = [p for p in tmp_path.rglob("*.tmp")]
    (temp,) = seen
    assert temp.parent == (tmp_path / PROJECT_TMP if inside else target.parent)
    assert target.read_bytes() == b"{}"
