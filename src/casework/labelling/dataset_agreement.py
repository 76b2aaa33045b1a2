"""Agreement of a dataset as stored: ``DATASET[@VERSION]`` read, then measured by casework.agreement.

Entry point: :func:`dataset_agreement`, which applies the project's thresholds and declared tools.
Reading is the labelling side's job (the release's cases and its raw labels, on every core for a
large dataset, the labels streamed into agreement rows by
:class:`casework.agreement.grouping.LabelGroups`); the numbers come from
:func:`casework.agreement.report.report_from_partition`, which does no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

from casework.agreement import AgreementReport
from casework.agreement.bands import BandEdges
from casework.agreement.grouping import LabelGroups, Partition, Ungrouped, compact_label
from casework.agreement.report import AgreementSettings, CaseFacts, report_from_partition
from casework.dataset import DatasetScan, ProgressCallback, declared_tools
from casework.dataset.jsonl import collector_paused
from casework.dataset.parallel import (
    PARALLEL_MIN_BYTES,
    parallel_workers,
    scan_bytes,
    scan_dataset_chunks,
)
from casework.dataset.stream import scan_dataset
from casework.dataset.versions import LABELS_FILE
from casework.errors import ConfigError, UsageError
from casework.labelling._fastread import file_stamp, read_checked_labels
from casework.project import Project

__all__ = ["dataset_agreement"]


def dataset_agreement(
    project: Project,
    ref: str,
    *,
    slice: str | None = None,
    guideline: str | None = None,
    bootstrap: int = 2000,
    seed: int = 0,
    on_progress: ProgressCallback | None = None,
) -> AgreementReport:
    """Agreement report of ``DATASET[@VERSION]`` with the project's thresholds and declared tools.

    ``on_progress`` is told the bytes of the cases file read so far, and in all.

    Raises:
        UsageError: Unknown dataset, slice or guideline version.
        InputErrors: Bad dataset files, or a labeller labelled a case twice under one version.
        ConfigError: The declared tools file is missing or malformed.
    """
    if bootstrap < 0:
        raise UsageError(f"must be 0 (none) or more resamples. Got {bootstrap}.", param="bootstrap")
    # Cases, labels and the report's rows hold no reference cycles: with the collector running,
    # its passes over the heap of loaded cases took a fifth of `agreement` at 20k labels.
    with collector_paused():
        return _dataset_agreement(project, ref, slice, guideline, bootstrap, seed, on_progress)


def _dataset_agreement(
    project: Project,
    ref: str,
    slice: str | None,
    guideline: str | None,
    bootstrap: int,
    seed: int,
    on_progress: ProgressCallback | None = None,
) -> AgreementReport:
    thresholds = project.config.thresholds
    scan, facts, part = _scan(project, ref, slice, guideline, on_progress)
    try:
        tools = sorted(declared_tools(project))
        tool_note = None
    except ConfigError as exc:
        tools = []
        tool_note = (
            f"declared tools unavailable ({exc}); per-tool rows cover tools named in labels."
        )
    settings = AgreementSettings(
        edges=BandEdges(thresholds.kappa_gate, thresholds.kappa_dependable),
        min_rows=thresholds.kappa_min_rows,
        min_positives=thresholds.kappa_min_positives,
        bootstrap=bootstrap,
        seed=seed,
    )
    report = report_from_partition(
        facts,
        part,
        dataset=scan.ref,
        hash=scan.hash,
        tools=tools,
        slice=slice,
        guideline=guideline,
        settings=settings,
    )
    if tool_note:
        report = replace(report, notes=(*report.notes, tool_note))
    return report


def _scan(
    project: Project,
    ref: str,
    slice: str | None,
    guideline: str | None,
    on_progress: ProgressCallback | None = None,
) -> tuple[DatasetScan, CaseFacts, Partition]:
    """Validate ``ref`` as :func:`casework.dataset.load_dataset` does, keeping only compact facts.

    A large working tree or release is read on every core: each worker reduces its cases to facts
    and validates a share of the labels, which are then streamed into agreement rows without a
    second validation (:func:`casework.labelling._fastread.read_checked_labels`). No case model
    outlives its line, and no label outlives its case's row.

    Raises:
        InputErrors: Bad dataset files, or a labeller labelled a case twice under one version.
    """
    facts = CaseFacts(decoded=True)
    size = scan_bytes(project, ref)
    workers = parallel_workers()
    if size is not None and size >= PARALLEL_MIN_BYTES and workers >= 2:
        got: list[LabelGroups | None] = []

        def with_files(place: Path) -> Callable[[list[CaseFacts]], None]:
            # Stamped before the workers validate the labels, read after: a file that changed
            # in between (or a copy gone) gives None, and everything is read again below.
            stamp = file_stamp(place / LABELS_FILE)

            def after(parts: list[CaseFacts]) -> None:
                for part in parts:
                    facts.merge(part)
                groups = partial(_groups, facts, slice, guideline)
                got.append(read_checked_labels(place / LABELS_FILE, stamp, groups))

            return after

        scan, _ = scan_dataset_chunks(
            project,
            ref,
            lambda: CaseFacts(decoded=True),
            workers=workers,
            keep_labels=False,
            on_progress=on_progress,
            with_files=with_files,
        )
        read = got[0] if got else None
        if read is not None:
            return scan, facts, read.finish(project.relative(scan.path / LABELS_FILE))
        facts = CaseFacts(decoded=True)  # the labels were not read as validated: read it all again
    scan = scan_dataset(project, ref, facts.add, on_progress=on_progress)
    try:
        groups = _groups(facts, slice, guideline, True)
        for rec in scan.labels:
            groups.add(compact_label(rec))
        groups.complete()
    except Ungrouped:
        groups = _groups(facts, slice, guideline, False)
        for rec in scan.labels:
            groups.add(compact_label(rec))
    return scan, facts, groups.finish(project.relative(scan.path / LABELS_FILE))


def _groups(
    facts: CaseFacts, slice: str | None, guideline: str | None, grouped: bool
) -> LabelGroups:
    return LabelGroups(facts.slice_of, slice=slice, guideline=guideline, grouped=grouped)
