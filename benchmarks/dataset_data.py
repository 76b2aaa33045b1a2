"""Seeded generator of large casework projects built from the refunds example (dataset benchmark).

``make_project(root, n, seed)`` copies the example project's configuration (casework.toml, agent,
guidelines) to ``root`` and writes a dataset ``refunds`` of ``n`` cases: copy ``k`` of example case
``c`` is ``c`` with id ``<c.id>-<k>`` (synthetic cases point at the same copy of their parent), its
user turns varied with a few seeded words so that no two cases share text, about 5.6 KB of JSON
each like the example's. With ``labels=True`` every case gets a first and a second (calibration)
label from the example's first label; the second disagrees on the outcome for about one case in ten.

``edit_cases(path, share, seed)`` rewrites the wording of a seeded ``share`` of the cases in place
(a "1% edit" between releases). The same arguments always give the same bytes; nothing here is
committed data.

Run ``python benchmarks/dataset_data.py N OUT_DIR [--seed SEED]`` to write a project.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "refunds"
DATASET = "refunds"
OUTCOMES = ("resolve", "clarify", "refuse", "escalate")  # casework.schema.Outcome

WORDS = tuple(
    [
        "please",
        "quickly",
        "today",
        "again",
        "kindly",
        "honestly",
        "really",
        "still",
        "already",
        "maybe",
        "soon",
        "now",
        "thanks",
        "urgent",
        "simple",
        "small",
        "quick",
        "new",
        "old",
        "second",
        "another",
        "different",
        "same",
        "usual",
        "whole",
        "exactly",
        "properly",
        "finally",
        "actually",
        "basically",
        "literally",
        "just",
        "also",
        "even",
        "only",
    ]
)


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _dump(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False)


def _vary(text: str, rng: random.Random) -> str:
    extra = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5)))
    return f"{text} ({extra})"


def _copy_case(case: dict[str, Any], k: int, rng: random.Random) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(case))
    out["id"] = f"{case['id']}-{k}"
    provenance = out.get("provenance") or {}
    if provenance.get("parent_id"):
        provenance["parent_id"] = f"{provenance['parent_id']}-{k}"
    if provenance.get("retain_until"):
        provenance["retain_until"] = "2099-12-31"  # the example's dates pass; copies stay valid
    for turn in out["situation"]["turns"]:
        if turn["role"] == "user":
            turn["content"] = _vary(turn["content"], rng)
    return out


def _copy_order(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Seeds before their synthetic variants, so that every parent is in the first copies."""
    return sorted(cases, key=lambda c: c.get("source") == "synthetic")


def _labels_for(case_id: str, first: dict[str, Any], rng: random.Random) -> list[str]:
    one = dict(first, case_id=case_id, role="first")
    one.pop("overlap_reason", None)
    two = dict(one, role="second", overlap_reason="calibration")
    two["labeller"] = "lab-90" if one["labeller"] != "lab-90" else "lab-91"
    if rng.random() < 0.1:
        two["outcome"] = rng.choice([o for o in OUTCOMES if o != one["outcome"]])
    return [_dump(one), _dump(two)]


def _copy_config(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy2(EXAMPLE / "casework.toml", root / "casework.toml")
    for folder in ("agent", "guidelines"):
        shutil.copytree(EXAMPLE / folder, root / folder, dirs_exist_ok=True)


def make_project(root: Path, n: int, seed: int = 0, *, labels: bool = True) -> Path:
    """Write a project with a dataset of ``n`` cases at ``root``; returns the cases file.

    Args:
        root: Folder of the new project (created; an existing dataset there is replaced).
        n: Number of cases.
        seed: Seed of every random choice (same seed, same bytes).
        labels: Also write ``labels.jsonl`` with two labels per case.
    """
    _copy_config(root)
    source = EXAMPLE / "datasets" / DATASET
    templates = _copy_order(_read_jsonl(source / "cases.jsonl"))
    first_labels: dict[str, dict[str, Any]] = {}
    for rec in _read_jsonl(source / "labels.jsonl"):
        if rec["role"] == "first":
            first_labels.setdefault(rec["case_id"], rec)
    rng = random.Random(seed)
    folder = root / "datasets" / DATASET
    folder.mkdir(parents=True, exist_ok=True)
    cases_path = folder / "cases.jsonl"
    with (
        cases_path.open("w", encoding="utf-8") as cases_out,
        (folder / "labels.jsonl").open("w", encoding="utf-8") as labels_out,
    ):
        for i in range(n):
            k, template = divmod(i, len(templates))
            case = _copy_case(templates[template], k, rng)
            cases_out.write(_dump(case) + "\n")
            first = first_labels.get(templates[template]["id"])
            if labels and first is not None:
                labels_out.write("\n".join(_labels_for(case["id"], first, rng)) + "\n")
    return cases_path


def edit_cases(path: Path, share: float, seed: int) -> int:
    """Reword the user turns of a seeded ``share`` of the cases in ``path``; returns how many."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rng = random.Random(seed)
    chosen = rng.sample(range(len(lines)), max(1, round(share * len(lines))))
    for i in chosen:
        case = json.loads(lines[i])
        for turn in case["situation"]["turns"]:
            if turn["role"] == "user":
                turn["content"] = _vary(turn["content"], rng)
        lines[i] = _dump(case)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(chosen)


def _main() -> None:
    parser = argparse.ArgumentParser(description="Write a seeded generated casework project.")
    parser.add_argument("cases", type=int, help="number of cases")
    parser.add_argument("folder", type=Path, help="project folder to write (created)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.cases < 1:
        parser.error("cases: must be at least 1")
    written = make_project(args.folder, args.cases, args.seed)
    print(f"{written}: {written.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    _main()
