from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from casework.cli import cli
from casework.cli._moved import note_text
from tests.leakage.corpora import PROMPT, case_row, project_rows, write_project
from tests.output_schema import printed

PROMPT_COPY = (
    "hi the steel pan from order 3141592 stopped working after two days please help me asap"
)


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "proj"
    write_project(folder, project_rows(), PROMPT.format(copied=PROMPT_COPY))
    monkeypatch.chdir(folder)
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    yield folder


def _printed(kind: str, result: Result) -> Any:
    return printed(kind, result.stdout)


def run(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--project", str(root), *args], catch_exceptions=False)


def test_scan_review_resolve_flow(root: Path) -> None:
    assert run(root, "dataset", "release", "support", "-m", "first").exit_code == 0

    scan = run(root, "leakage", "scan", "support", "--format", "json")
    assert scan.exit_code == 1
    data = json.loads(scan.stdout)
    assert data["method"] == "exact" and data["pairs"] == 4 and data["new"] == 4
    flags = {(f["left_id"], f["right_id"]): f for f in data["flags"]}
    assert set(flags) == {
        ("d-copy", "h-copy"),
        ("d-near", "h-near"),
        ("h-base", "s-near"),
        ("d-short", "h-short"),
    }
    assert flags[("d-copy", "h-copy")]["jaccard"] == 1.0

    text = run(root, "leakage", "scan", "support", "--method", "lsh")
    assert text.exit_code == 1
    assert "LSH: 26 bands × 8 rows = 208 permutations" in text.stdout
    assert "J=0.80: 0.992" in text.stdout
    assert "4 pairs across splits at Jaccard ≥ 0.80: 0 new" in text.stdout

    listed = run(root, "leakage", "review", "support", "--format", "json")
    assert [f["status"] for f in _printed("leakage-flag-list", listed)] == ["open"] * 4
    listed_text = run(root, "leakage", "review", "support")
    assert listed_text.stdout.splitlines()[-1] == (
        "decide: casework leakage decide support FLAG --move ROW | --keep | --template"
    )

    ids = {pair: f["id"] for pair, f in flags.items()}
    moved = run(
        root,
        "leakage",
        "decide",
        "support",
        str(ids[("d-near", "h-near")]),
        "--move",
        "h-near",
    )
    assert moved.exit_code == 0, moved.output
    assert f"flag {ids[('d-near', 'h-near')]} (d-near ~ h-near): move h-near to dev" in moved.stdout
    for pair, option in (
        (("d-copy", "h-copy"), "--keep"),
        (("h-base", "s-near"), "--keep"),
        (("d-short", "h-short"), "--template"),
    ):
        decided = run(
            root, "leakage", "decide", "support", str(ids[pair]), option, "--format", "json"
        )
        assert decided.exit_code == 0, decided.output
        flag = _printed("leakage-flag", decided)
        assert (flag["left_id"], flag["right_id"], flag["status"]) == (*pair, "decided")

    resolved = run(root, "leakage", "resolve", "support")
    assert resolved.exit_code == 0, resolved.output
    assert "support@2 released" in resolved.stdout
    assert (
        "leakage: moved 1 row from holdout to dev (near-duplicates across splits): h-near"
        in resolved.stdout
    )
    versions = (root / "datasets" / "support" / "versions.jsonl").read_text().splitlines()
    assert json.loads(versions[-1])["message"] == "leakage review: 1 row moved to dev"

    clean = run(root, "leakage", "scan", "support")
    assert clean.exit_code == 0, clean.output
    assert "3 suppressed" in clean.stdout
    assert "no unresolved leakage flags" in run(root, "leakage", "review", "support").stdout


#: What the old spelling `leakage decide` prints first (its new home is the review queue).
DECIDE = note_text("leakage decide", "review decide") + "\n"


def test_the_old_resolve_spelling_prints_its_registered_model(root: Path) -> None:
    assert run(root, "dataset", "release", "support", "-m", "first").exit_code == 0
    scan = json.loads(run(root, "leakage", "scan", "support", "--format", "json").stdout)
    for flag in scan["flags"]:
        moved = ["--move", flag["right_id"]] if flag["left_id"] == "d-near" else ["--keep"]
        assert run(root, "leakage", "decide", "support", str(flag["id"]), *moved).exit_code == 0
    resolved = _printed(
        "leakage-resolve", run(root, "leakage", "resolve", "support", "--format", "json")
    )
    assert (resolved["version"], resolved["moved"], resolved["kept"]) == (2, ["h-near"], 3)
    assert resolved["output"] == "leakage-resolve" and len(resolved["hash"]) == 64


def test_review_usage_errors(root: Path) -> None:
    run(root, "dataset", "release", "support", "-m", "first")
    run(root, "leakage", "scan", "support")
    both = run(root, "leakage", "decide", "support", "1", "--keep", "--template")
    assert both.exit_code == 2
    assert (
        both.stderr
        == DECIDE + "leakage decide: give exactly one of --move ROW, --keep or --template.\n"
    )
    undecided = run(root, "leakage", "decide", "support", "1")
    assert undecided.exit_code == 2
    assert (
        undecided.stderr
        == DECIDE + "leakage decide: give exactly one of --move ROW, --keep or --template.\n"
    )
    loose = run(root, "leakage", "decide", "support", "--keep")
    assert loose.exit_code == 2
    assert "Missing argument 'FLAG'." in loose.stderr
    listing_takes_no_decision = run(root, "leakage", "review", "support", "--flag", "1", "--keep")
    assert listing_takes_no_decision.exit_code == 2
    assert "No such option '--flag'." in listing_takes_no_decision.stderr
    unknown = run(root, "leakage", "decide", "support", "77", "--keep")
    assert unknown.exit_code == 2
    assert (
        unknown.stderr
        == DECIDE
        + "flag 77: no such flag in dataset 'support'. "
        + "Next: `casework review list --kind leakage-pair --dataset support`.\n"
    )
    nothing = run(root, "leakage", "resolve", "support")
    assert nothing.exit_code == 2
    assert (
        nothing.stderr
        == note_text("leakage resolve", "dataset apply")
        + "\nsupport: no decided flags to resolve. "
        + "Next: `casework review list --kind leakage-pair --dataset support`.\n"
    )
    bad = run(root, "leakage", "scan", "support", "--threshold", "0")
    assert bad.exit_code == 2
    assert bad.stderr == "--threshold: must be in (0, 1]. Got 0.0.\n"
    missing = run(root, "leakage", "scan", "nope")
    assert missing.exit_code == 2
    assert (
        missing.stderr == "datasets/nope/cases.jsonl: no dataset 'nope' (datasets here: support).\n"
    )


def test_prompt_check_fails_on_a_copied_holdout_row(root: Path) -> None:
    result = run(root, "leakage", "prompt", "--format", "json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert [(h["case_id"], h["violation"]) for h in data["hits"] if h["violation"]] == [
        ("h-prompt", True)
    ]
    assert result.stderr == "1 eval row found in the prompt files\n"
    (root / "agent" / "prompt.md").write_text(
        "You are a support agent. Be kind.\n", encoding="utf-8"
    )
    ok = run(root, "leakage", "prompt")
    assert ok.exit_code == 0
    assert "no row found in the prompt files" in ok.stdout


def test_prompt_check_reports_a_missing_file(root: Path) -> None:
    (root / "agent" / "prompt.md").unlink()
    result = run(root, "leakage", "prompt")
    assert result.exit_code == 1
    assert (
        result.stderr
        == "casework.toml: agent.prompt_files: file not found. Got 'agent/prompt.md'.\n"
    )


def test_corpus_scan(root: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "ft.jsonl"
    copy = "hello there where is my refund for order 4411223 i returned the red lamp last week thank you"
    corpus.write_text(
        json.dumps({"text": "an unrelated document about lamps"})
        + "\n"
        + json.dumps({"text": copy})
        + "\n",
        encoding="utf-8",
    )
    result = run(root, "leakage", "corpus", str(corpus), "--format", "json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["documents"] == 2 and data["rows_found"] == ["support:h-near"]
    assert data["hits"][0]["ref"] == f"{corpus}:2"
    clean = tmp_path / "clean.txt"
    clean.write_text("nothing here\n", encoding="utf-8")
    ok = run(root, "leakage", "corpus", str(clean))
    assert ok.exit_code == 0
    assert "no eval row found in the corpus" in ok.stdout
    gone = run(root, "leakage", "corpus", str(tmp_path / "missing.parquet"))
    assert gone.exit_code == 1
    assert gone.stderr == f"{tmp_path / 'missing.parquet'}: no corpus file found.\n"


def test_rows_without_user_text_never_match(root: Path) -> None:
    rows = [
        case_row("d-1", "dev", ""),
        case_row("h-1", "holdout", ""),
        case_row("h-2", "holdout", "   ...   "),
    ]
    (root / "datasets" / "support" / "cases.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows)
    )
    run(root, "dataset", "release", "support", "-m", "empty")
    result = run(root, "leakage", "scan", "support", "--format", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["pairs"] == 0


def test_a_rescan_at_another_threshold_says_the_flags_stay(root: Path) -> None:
    assert run(root, "dataset", "release", "support", "-m", "first").exit_code == 0
    assert run(root, "leakage", "scan", "support").exit_code == 1
    assert (root / "datasets" / "support" / "leakage.jsonl").exists()
    strict = run(root, "leakage", "scan", "support", "--threshold", "1.0")
    assert strict.exit_code == 1  # the held flags are still unresolved
    said = " ".join(strict.stdout.split())
    assert "3 pairs across splits at Jaccard ≥ 1.00: 0 new, 0 reopened" in said
    assert "0 gone" in said
    assert (
        "1 unresolved flag not found at threshold 1.00 stays unresolved: only a scan at the "
        "configured threshold 0.80 (thresholds.leakage_jaccard), or a change to the rows, "
        "supersedes a flag"
    ) in said
    data = json.loads(
        run(root, "leakage", "scan", "support", "--threshold", "1.0", "--format", "json").stdout
    )
    assert data["configured_threshold"] == 0.8 and data["gone"] == 0
    assert len(data["held"]) == 1 and len(data["flags"]) == 3
    listed = run(root, "leakage", "review", "support", "--format", "json")
    assert [f["status"] for f in json.loads(listed.stdout)] == ["open"] * 4
