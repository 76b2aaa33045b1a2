"""Review kind ``leakage-pair``: a near-duplicate pair across splits from the leakage scan.

Items are built from the open flags of `datasets/<name>/leakage.jsonl`
(:func:`leakage_pair_items`); the payload holds both rows' user text and the shingles they share
with character spans, so a page can highlight them. Decisions are those of `casework leakage
decide`: move the left or the right row to dev, keep both, or mark the pair template-like,
applied through :func:`casework.leakage.decide` (and applied to the dataset by `dataset apply`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from casework.dataset import load_dataset
from casework.errors import Hint, UsageError
from casework.leakage import decide, list_flags
from casework.leakage.flagfile import read_flags
from casework.leakage.text import compared_text
from casework.project import Project
from casework.review._spans import shared_spans
from casework.review._task import NewItem, ReviewTask
from casework.schema import Case

LEAKAGE_PAIR = "leakage-pair"
"""The kind's name."""
DECISIONS = ("move-left", "move-right", "keep", "template")
"""Move the left row to dev, move the right row to dev, keep both, template-like."""


def pair_subject(left_id: str, right_id: str) -> str:
    """The subject of a pair's item: ``left~right``."""
    return f"{left_id}~{right_id}"


def _side(case: Case, split: str, highlight: list[list[int]]) -> dict[str, Any]:
    return {
        "case_id": case.id,
        "split": split,
        "slice": case.slice,
        "text": compared_text(case.situation),
        "highlight": highlight,
    }


def leakage_pair_items(project: Project, dataset: str) -> list[NewItem]:
    """One item per open flag of ``dataset`` (highest Jaccard first), with texts and spans.

    Raises:
        UsageError: Unknown dataset.
        InputErrors: A bad review file or dataset file.
    """
    flags = [f for f in list_flags(project, dataset) if f.status == "open"]
    if not flags:
        return []
    data = load_dataset(project, flags[0].dataset)
    by_id = {c.id: c for c in data.cases}
    k = project.config.leakage.shingle_k
    items = []
    for flag in flags:
        left, right = by_id.get(flag.left_id), by_id.get(flag.right_id)
        if left is None or right is None:
            continue  # a row left the dataset; the next scan marks the flag gone
        spans = shared_spans(compared_text(left.situation), compared_text(right.situation), k)
        payload = {
            "flag_id": flag.id,
            "jaccard": flag.jaccard,
            "shared_count": spans.count,
            "shingle_k": k,
            "left": _side(left, flag.left_split, spans.left),
            "right": _side(right, flag.right_split, spans.right),
            "shared": spans.shingles,
        }
        items.append(
            NewItem(
                LEAKAGE_PAIR,
                flag.dataset,
                pair_subject(flag.left_id, flag.right_id),
                left.slice,
                payload,
            )
        )
    return items


@dataclass(frozen=True)
class LeakagePairKind:
    """The ``leakage-pair`` kind (see the module docstring)."""

    name: str = LEAKAGE_PAIR
    decisions: tuple[str, ...] = DECISIONS

    def check(
        self,
        project: Project,
        task: ReviewTask,
        decision: str,
        reason: str | None,
        data: Mapping[str, Any] | None,
    ) -> dict[str, Any] | None:
        """A pair decision carries nothing besides its name and an optional reason."""
        if data:
            raise UsageError(f"a {LEAKAGE_PAIR} decision carries no data.", param="data")
        return None

    def apply(
        self,
        project: Project,
        task: ReviewTask,
        decision: str,
        *,
        reason: str | None,
        reviewer: str,
        data: dict[str, Any] | None,
        now: datetime,
    ) -> None:
        """Record the decision on the pair's flag with :func:`casework.leakage.decide`."""
        left_id = task.payload["left"]["case_id"]
        right_id = task.payload["right"]["case_id"]
        record = next(
            (
                r
                for r in read_flags(project, task.dataset)
                if (r.left_id, r.right_id) == (left_id, right_id)
            ),
            None,
        )
        if record is None or record.status != "open":
            state = "gone from the review file" if record is None else record.status
            raise UsageError(
                f"the flag of {left_id} ~ {right_id} is {state}: it was settled outside the "
                "review queue."
            ).suggest(Hint("review sync", why="to withdraw the item"))
        move_id = {"move-left": left_id, "move-right": right_id}.get(decision)
        decide(
            project,
            task.dataset,
            record.id,
            "move" if move_id else decision,  # type: ignore[arg-type]
            move_id=move_id,
            reviewer=reviewer,
            note=reason,
            now=now,
        )
