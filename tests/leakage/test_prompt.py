from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from casework.errors import InputError, UsageError
from casework.leakage import check_prompts
from casework.leakage.prompt import prompt_scores
from casework.project import Project, load_project
from tests.leakage.corpora import INTENTS, case_row, message, write_project


def templated_rows(n: int, seed: int, product: str) -> list[str]:
    """Rows of the shared intent templates whose product differs from ``product``."""
    rng = random.Random(seed)
    rows: list[str] = []
    while len(rows) < n:
        row = message(rng)
        if product not in row:
            rows.append(row)
    return rows


def test_planted_copy_is_flagged_and_templated_negatives_are_not() -> None:
    copied = "where is my refund for order 6728730 i returned the desk chair last week thanks"
    rows = templated_rows(200, seed=2, product="desk chair")
    rows.insert(17, copied)
    # The prompt quotes every intent template (other slot values) plus the copied row.
    rng = random.Random(99)
    examples = [t.format(o=rng.randrange(10**6, 10**7), p="green mug") for t in INTENTS]
    prompt = "Instructions.\n" + "\n".join(f"User: {e}" for e in examples) + f"\nUser: {copied}\n"
    scores = prompt_scores(rows, prompt)
    others = [i for i in range(len(rows)) if i != 17]
    assert scores.weighted[17] == 1.0 and scores.long[17] == 1.0
    # Plain containment alone flags many unrelated rows; the two signals flag none of them.
    assert sum(scores.plain[i] > 0.5 for i in others) >= 5
    assert max(scores.weighted[i] for i in others) <= 0.5
    assert max(scores.long[i] for i in others) <= 0.5


def test_short_rows_use_their_whole_word_sequence() -> None:
    scores = prompt_scores(["refund please", "please refund"], "Say: refund please.")
    assert scores.long.tolist() == [1.0, 0.0]


def test_check_reports_violations_by_split_and_frozen(leak_project: Project) -> None:
    report = check_prompts(leak_project)
    assert [h.case_id for h in report.violations] == ["h-prompt"]
    assert all(h.split == "dev" for h in report.hits if not h.violation)
    assert report.files == ["agent/prompt.md"]
    hit = report.violations[0]
    assert hit.weighted == 1.0 and hit.long == 1.0 and hit.split == "holdout"


def test_dev_rows_in_few_shot_are_allowed_unless_frozen(tmp_path: Path) -> None:
    text = "my smart watch arrived damaged and the lid is cracked order 5550001"
    rows = [
        case_row("d-1", "dev", text),
        case_row(
            "d-2", "dev", "where is my refund for order 123 i returned the kettle", frozen=True
        ),
        case_row("d-3", "dev", "please cancel order 99 i bought the wrong lamp by mistake"),
    ]
    write_project(
        tmp_path,
        rows,
        f"Example: {text}\nExample: where is my refund for order 123 i returned the kettle\n",
    )
    report = check_prompts(load_project(tmp_path))
    assert [(h.case_id, h.frozen, h.violation) for h in report.hits] == [
        ("d-2", True, True),
        ("d-1", False, False),
    ]


def test_frozen_folder_rows_are_checked(tmp_path: Path) -> None:
    text = "the wool jacket from order 4242424 stopped working after two days"
    write_project(tmp_path, [case_row("d-1", "dev", "hello")], f"User: {text}\n")
    frozen = tmp_path / "private" / "vault"
    frozen.mkdir(parents=True)
    (frozen / "cases.jsonl").write_text(
        json.dumps(case_row("p-1", "holdout", text)) + "\n", encoding="utf-8"
    )
    config = (tmp_path / "casework.toml").read_text(encoding="utf-8")
    (tmp_path / "casework.toml").write_text(
        config + '\n[paths]\nfrozen = "private"\n', encoding="utf-8"
    )
    report = check_prompts(load_project(tmp_path))
    assert [(h.dataset, h.case_id, h.frozen, h.violation) for h in report.violations] == [
        ("vault", "p-1", True, True)
    ]


def test_configuration_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_project(tmp_path, [case_row("d-1", "dev", "hello")])
    with pytest.raises(InputError) as exc:
        check_prompts(load_project(tmp_path))
    assert (
        str(exc.value)
        == "casework.toml: agent.prompt_files: file not found. Got 'agent/prompt.md'."
    )
    (tmp_path / "casework.toml").write_text('name = "x"\n', encoding="utf-8")
    with pytest.raises(UsageError) as exc2:
        check_prompts(load_project(tmp_path))
    assert "agent.prompt_files is empty" in str(exc2.value)
