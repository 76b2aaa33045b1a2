from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from casework.cli import cli, os_error_message
from casework.cli.reference import render_reference, walk_commands
from tests.factories import case_dict, git_commit, write_lines

Run = Callable[..., Result]


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


def test_check_release_versions_show_diff(project_dir: Path, run_cli: Run) -> None:
    assert run_cli("dataset", "check", "refunds").exit_code == 0
    first = run_cli("dataset", "release", "refunds", "-m", "first")
    assert first.exit_code == 0, first.output
    assert "refunds@1 released" in first.stdout
    git_commit(project_dir)
    again = run_cli("dataset", "release", "refunds", "-m", "again")
    assert "unchanged since release 1" in again.stdout
    cases = project_dir / "datasets" / "refunds" / "cases.jsonl"
    lines = cases.read_text().splitlines()
    data = json.loads(lines[0])
    data["split"] = "dev"
    data["label"]["outcome"] = "escalate"
    cases.write_text("\n".join([json.dumps(data), *lines[1:]]) + "\n")
    second = run_cli("dataset", "release", "refunds", "-m", "relabel r-1")
    assert second.exit_code == 0
    assert "relabelled 1 case" in second.stdout and "moved split of 1 case" in second.stdout
    versions = run_cli("dataset", "versions", "refunds", "--format", "json")
    assert [v["number"] for v in json.loads(versions.stdout)] == [1, 2]
    diff = run_cli("dataset", "diff", "refunds", "1", "2", "--format", "json")
    assert json.loads(diff.stdout)["changed"] == [
        {
            "id": "r-1",
            "fields": ["label.outcome", "split"],
            "relabelled": True,
            "split": ["holdout", "dev"],
        }
    ]
    shown = run_cli("dataset", "show", "refunds@1", "r-1")
    assert json.loads(shown.stdout)["split"] == "holdout"
    text_diff = run_cli("dataset", "diff", "refunds", "1", "2")
    assert "~ r-1 [relabelled, moved holdout->dev]: label.outcome, split" in text_diff.stdout


def test_bad_line_reported_with_exit_1_and_nothing_written(project_dir: Path, run_cli: Run) -> None:
    write_lines(
        project_dir / "datasets" / "refunds" / "cases.jsonl",
        [case_dict("a", label={"outcome": "resolved"}), case_dict("b"), case_dict("b")],
    )
    before = _snapshot(project_dir)
    result = run_cli("dataset", "release", "refunds", "-m", "x")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "datasets/refunds/cases.jsonl:1: label.outcome: Input should be 'resolve', 'clarify', 'refuse' or 'escalate'. Got 'resolved'.",
        "datasets/refunds/cases.jsonl:3: id: duplicate id, first on line 2. Got 'b'.",
    ]
    assert _snapshot(project_dir) == before


@pytest.mark.parametrize(
    "command", [("dataset", "check", "refunds"), ("dataset", "release", "refunds", "-m", "x")]
)
def test_a_folder_where_a_file_belongs_is_named_not_traced(
    project_dir: Path, run_cli: Run, command: tuple[str, ...]
) -> None:
    labels = project_dir / "datasets" / "refunds" / "labels.jsonl"
    labels.unlink(missing_ok=True)
    labels.mkdir()
    before = _snapshot(project_dir)
    result = run_cli(*command)
    assert result.exit_code == 1
    assert result.stderr == "datasets/refunds/labels.jsonl: Is a directory.\n"
    assert _snapshot(project_dir) == before
    with pytest.raises(IsADirectoryError):  # --debug keeps the trace
        run_cli("--debug", *command)


def test_undeclared_and_stale_tools_fail_check(project_dir: Path, run_cli: Run) -> None:
    write_lines(
        project_dir / "datasets" / "refunds" / "cases.jsonl",
        [
            case_dict(
                "a",
                label={
                    "outcome": "resolve",
                    "required_tools": ["lookup_order"],
                    "forbidden_tools": ["cancel_order"],
                },
            )
        ],
    )
    result = run_cli("dataset", "check", "refunds")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "error: undeclared_tool: a:lookup_order: required tool is not declared by the agent",
        "error: stale_forbidden_tool: a:cancel_order: forbidden tool is not declared by the agent: the rule is stale and can never fail. Next: `casework dataset migrate` to rename it (or remove the rule).",
    ]


def test_migrate_releases_next_version_and_refuses_undeclared_target(
    project_dir: Path, run_cli: Run
) -> None:
    write_lines(
        project_dir / "datasets" / "refunds" / "cases.jsonl",
        [case_dict("a", label={"outcome": "resolve", "required_tools": ["lookup_order"]})],
    )
    (project_dir / "renames.toml").write_text('[tools]\nlookup_order = "fetch_order"\n')
    before = _snapshot(project_dir)
    bad = run_cli("dataset", "migrate", "refunds", "-m", "rename")
    assert bad.exit_code == 1
    assert (
        bad.stderr
        == "renames.toml:2: tools.lookup_order: rename target is not a declared tool. Got 'fetch_order'.\n"
    )
    assert _snapshot(project_dir) == before
    (project_dir / "renames.toml").write_text('[tools]\nlookup_order = "get_order"\n')
    ok = run_cli("dataset", "migrate", "refunds", "-m", "rename")
    assert ok.exit_code == 0, ok.output
    assert "lookup_order->get_order: 1 place" in ok.stdout and "refunds@1 released" in ok.stdout
    assert run_cli("dataset", "check", "refunds").exit_code == 0


def test_missing_config_says_where_it_looked(
    tmp_path: Path, run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run_cli("dataset", "check", "refunds")
    assert result.exit_code == 1
    assert result.stderr == (
        f"casework.toml: not found in {tmp_path.resolve()} or any parent folder (or name the "
        "project folder). Next: `casework init` to create one.\n"
    )


def test_unknown_config_key(project_dir: Path, run_cli: Run) -> None:
    (project_dir / "casework.toml").write_text('name = "x"\n\n[thresholds]\nkappa_gat = 0.5\n')
    result = run_cli("dataset", "check", "refunds")
    assert result.exit_code == 1
    assert (
        result.stderr
        == f"{project_dir / 'casework.toml'}:4: thresholds.kappa_gat: unknown key. Got 0.5.\n"
    )


def test_unknown_version_exit_1(project_dir: Path, run_cli: Run) -> None:
    run_cli("dataset", "release", "refunds", "-m", "first")
    result = run_cli("dataset", "show", "refunds@7", "r-1")
    assert result.exit_code == 1
    assert result.stderr == "refunds@7: no release number 7; releases are 1 to 1.\n"


def test_usage_error_exit_2(project_dir: Path, run_cli: Run) -> None:
    result = run_cli("dataset", "release", "refunds")
    assert result.exit_code == 2
    assert "Missing option '-m' / '--message'" in result.stderr
    assert run_cli("dataset", "release", "refunds@1", "-m", "x").exit_code == 2


def test_init_writes_a_valid_project(tmp_path: Path, run_cli: Run) -> None:
    result = run_cli("init", str(tmp_path / "new"))
    assert result.exit_code == 0
    assert run_cli("--project", str(tmp_path / "new"), "db", "status").exit_code == 0
    again = run_cli("init", str(tmp_path / "new"))
    assert again.exit_code == 2 and "never overwrites" in again.stderr


def test_schema_command_prints_json_schema(run_cli: Run) -> None:
    schema = json.loads(run_cli("schema").stdout)
    assert schema["title"] == "Case" and "situation" in schema["properties"]


def test_cases_filters(project_dir: Path, run_cli: Run) -> None:
    out = run_cli("dataset", "cases", "refunds", "--split", "holdout", "--format", "json")
    assert json.loads(out.stdout) == ["r-1"]
    under = run_cli(
        "dataset", "cases", "refunds", "--labelled-under", "refunds-g7", "--format", "json"
    )
    assert json.loads(under.stdout) == ["r-3", "r-1", "r-2"]


def test_cases_past_the_table_limit_print_plain_columns(
    project_dir: Path, run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    import casework.cli.dataset as datasets

    drawn = run_cli("dataset", "cases", "refunds")
    assert "┃ id" in drawn.stdout  # rich's drawn table at or below the limit
    monkeypatch.setattr(datasets, "_RICH_TABLE_MAX_ROWS", 2)
    plain = run_cli("dataset", "cases", "refunds").stdout.splitlines()
    assert plain[0].split() == ["id", "slice", "split", "source", "outcome", "guideline", "oracle"]
    assert set(plain[1]) == {"-", " "}
    rows = [line.split() for line in plain[2:-2]]
    assert sorted(r[0] for r in rows) == ["r-1", "r-2", "r-3"]
    widths = [len(cell) for cell in plain[1].split()]
    for line in plain[2:-2]:  # every column starts where its header's does
        starts = [0]
        for w in widths[:-1]:
            starts.append(starts[-1] + w + 2)
        assert all(line[s - 2 : s] == "  " for s in starts[1:] if s < len(line))
    assert plain[-2].startswith("3 of 3 cases in ")


def test_cases_on_every_core_list_what_one_process_lists(
    project_dir: Path, run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large working tree is listed by forked workers (forced here): same rows, same order."""
    one = [run_cli("dataset", "cases", "refunds", *f).stdout for f in ([], ["--split", "holdout"])]
    one_json = run_cli("dataset", "cases", "refunds", "--format", "json").stdout
    monkeypatch.setattr("casework.dataset.parallel.PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr("casework.dataset.parallel.parallel_workers", lambda: 3)
    many = [run_cli("dataset", "cases", "refunds", *f).stdout for f in ([], ["--split", "holdout"])]
    assert many == one
    assert run_cli("dataset", "cases", "refunds", "--format", "json").stdout == one_json
    label = {
        "case_id": "r-404",  # a label naming no case: refused by the workers' checks too
        "labeller": "lab-a",
        "role": "first",
        "outcome": "resolve",
        "guideline_version": "refunds-g7",
        "labelled_at": "2026-11-01T10:00:00Z",
    }
    write_lines(project_dir / "datasets" / "refunds" / "labels.jsonl", [label])
    refused = run_cli("dataset", "cases", "refunds")
    assert refused.exit_code != 0 and "r-404" in refused.output
    monkeypatch.setattr(
        "casework.dataset.parallel.PARALLEL_MIN_BYTES", 1 << 60
    )  # one process again
    alone = run_cli("dataset", "cases", "refunds")
    assert alone.exit_code == refused.exit_code and alone.output == refused.output


def test_every_command_is_documented() -> None:
    reference = (Path(__file__).parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    for name, command in walk_commands(cli):
        assert f"## `{name}`" in reference, f"{name} missing from docs/cli.md (run `make docs`)"
        assert command.help, f"{name} has no help text"
    assert reference == render_reference(), "docs/cli.md is out of date: run `make docs`"


def test_unreachable_workbench_via_cli(
    project_dir: Path, run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CASEWORK_DB_URL", "postgresql+psycopg://me:pw@127.0.0.1:9/none")
    result = run_cli("db", "upgrade")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "workbench database postgresql+psycopg://me:***@127.0.0.1:9/none is unreachable: OperationalError:"
    )
    assert result.stderr.rstrip().endswith(
        "Check the URL (CASEWORK_DB_URL or [workbench] url in casework.toml) and that the server runs."
    )


def test_db_upgrade_and_status_on_sqlite(project_dir: Path, run_cli: Run) -> None:
    first = run_cli("db", "upgrade")
    assert first.exit_code == 0 and "upgraded empty ->" in first.stdout
    again = run_cli("db", "upgrade")
    assert "already up to date" in again.stdout
    assert "up to date" in run_cli("db", "status").stdout


def test_synthetic_cap_fails_check(project_dir: Path, run_cli: Run) -> None:
    synthetic = {"source": "synthetic", "provenance": {"parent_id": "r-1", "transform": "typos"}}
    write_lines(
        project_dir / "datasets" / "refunds" / "cases.jsonl",
        [
            case_dict("r-1"),
            case_dict("r-1~typos", **synthetic),
            case_dict("r-1~typos-2", **synthetic),
        ],
    )
    result = run_cli("dataset", "check", "refunds")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: synthetic_cap: refunds: ")
    assert "2 of 3" in result.stderr


def test_check_pii_flags_a_raw_email_without_repeating_it(project_dir: Path, run_cli: Run) -> None:
    leaky = case_dict(
        "leak",
        situation={
            "goal": "g",
            "turns": [{"role": "user", "content": "mail me at dana.whit@gmail.com"}],
        },
    )
    write_lines(project_dir / "datasets" / "refunds" / "cases.jsonl", [case_dict("ok"), leaky])
    assert run_cli("dataset", "check", "refunds").exit_code == 0
    result = run_cli("dataset", "check", "refunds", "--pii")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: residual_pii: leak:")
    assert "dana.whit@gmail.com" not in result.stderr


def test_file_format_reference_is_up_to_date() -> None:
    from casework.cli.reference import render_formats

    formats = (Path(__file__).parents[2] / "docs" / "formats.md").read_text(encoding="utf-8")
    assert formats == render_formats(formats), "docs/formats.md is out of date: run `make docs`"


def test_lazy_command_table_matches_the_modules() -> None:
    import importlib

    from casework.cli import COMMAND_MODULES

    for module_name in sorted(set(COMMAND_MODULES.values())):
        module = importlib.import_module(f"casework.cli.{module_name}")
        names = {command.name for command in module.COMMANDS}
        listed = {name for name, where in COMMAND_MODULES.items() if where == module_name}
        assert names == listed, f"casework.cli.{module_name}: COMMANDS and COMMAND_MODULES differ"


def test_os_error_messages_name_what_the_system_gives() -> None:
    assert os_error_message(OSError(28, "No space left on device", 3)) == (
        "No space left on device."  # a file descriptor is not a path to show
    )
    assert os_error_message(OSError(18, "Invalid cross-device link", "/a", None, "/b")) == (
        "/a -> /b: Invalid cross-device link."
    )
    assert os_error_message(OSError("weird")) == "weird."
