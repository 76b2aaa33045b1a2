"""The changelog lines of a release, computed from the lines it changes (or from a full diff)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from casework.dataset._prepare import Prepared
from casework.dataset._refusals import label_identity, label_key
from casework.dataset.diff import diff_cases, diff_indexed
from casework.schema import Case, LabelRecord, VersionRecord


def changes_by_line(
    prepared: Prepared, old: tuple[dict[str, Case], list[LabelRecord]]
) -> list[str]:
    """The changelog from line hashes: as :func:`changes_since` gives, parsing changed cases only."""
    new, index = prepared.new, prepared.parent_index
    if prepared.parent is None or index is None:
        return [f"first release: {len(new.ids)} cases"]
    diff = diff_indexed(
        dict(zip(index.ids, index.hashes, strict=True)),
        dict(zip(new.ids, new.hashes, strict=True)),
        old[0],
        new.models,
    )
    lines = [] if diff.empty else diff.summary_lines()
    if not prepared.labels_as_parent:
        lines += _label_change_lines(old[1], prepared.labels)
    return lines or diff.summary_lines()


def changes_since(
    parent: VersionRecord | None,
    old: tuple[list[Case], list[LabelRecord]] | None,
    cases: list[Case],
    labels: list[LabelRecord],
) -> list[str]:
    if parent is None:
        return [f"first release: {len(cases)} cases"]
    if old is None:
        return [
            "changes against the previous release could not be computed (its content is not recoverable)"
        ]
    diff = diff_cases(old[0], cases)
    lines = [] if diff.empty else diff.summary_lines()
    lines += _label_change_lines(old[1], labels)
    return lines or diff.summary_lines()


def _label_change_lines(old: Sequence[LabelRecord], labels: Sequence[LabelRecord]) -> list[str]:
    """Changelog lines of raw labels edited, added and removed."""
    lines = []
    before, after = (
        Counter(label_identity(r) for r in old),
        Counter(map(label_identity, labels)),
    )
    added, removed = sum((after - before).values()), sum((before - after).values())
    changed = {label_key(r) for r in labels if label_identity(r) not in before} & {
        label_key(r) for r in old
    }
    if changed:
        lines.append(f"labels.jsonl: {len(changed)} raw label(s) edited")
    if added - len(changed) > 0:
        lines.append(f"labels.jsonl: {added - len(changed)} raw label(s) added")
    if removed - len(changed) > 0:
        lines.append(f"labels.jsonl: {removed - len(changed)} raw label(s) removed")
    return lines
