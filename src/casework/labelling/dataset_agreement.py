"""Agreement of a dataset as stored: ``DATASET[@VERSION]`` read, then measured by casework.agreement.

Entry point: :func:`dataset_agreement`, which applies the project's thresholds and declared tools.
Reading is the labelling side's job (the release's cases and its raw labels, on every core for a
large dataset); the numbers come from :func:`casework.agreement.report_from_facts`, which does
no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from casework.agreement import AgreementReport
from casework.agreement.bands import BandEdges
from casework.agreement.report import (
    AgreementSettings,
    CaseFacts,
    CompactLabel,
    check_duplicates,
    compact_label,
    report_from_facts,
)
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
    scan, facts, labels = _scan(project, ref, on_progress)
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
    check_duplicates(labels, project.relative(scan.path / "labels.jsonl"))
    report = report_from_facts(
        facts,
        labels,
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
    project: Project, ref: str, on_progress: ProgressCallback | None = None
) -> tuple[DatasetScan, CaseFacts, list[CompactLabel]]:
    """Validate ``ref`` as :func:`casework.dataset.load_dataset` does, keeping only compact facts.

    A large working tree or release is read on every core: each worker reduces its cases to facts
    and validates a share of the labels, which are then read without a second validation
    (:func:`casework.labelling._fastread.read_checked_labels`). No case model outlives its line.
    """
    facts = CaseFacts(decoded=True)
    size = scan_bytes(project, ref)
    workers = parallel_workers()
    if size is not None and size >= PARALLEL_MIN_BYTES and workers >= 2:
        got: list[list[CompactLabel] | None] = []

        def with_files(place: Path) -> Callable[[], None]:
            # Stamped before the workers validate the labels, read after: a file that changed
            # in between (or a copy gone) gives None, and everything is read again below.
            stamp = file_stamp(place / LABELS_FILE)
            return lambda: got.append(read_checked_labels(place / LABELS_FILE, stamp))

        scan, parts = scan_dataset_chunks(
            project,
            ref,
            lambda: CaseFacts(decoded=True),
            workers=workers,
            keep_labels=False,
            on_progress=on_progress,
            with_files=with_files,
        )
        if got and got[0] is not None:
            for part in parts:
                facts.merge(part)
            return scan, facts, got[0]
        facts = CaseFacts(decoded=True)  # the labels were not read as validated: read it all again
    scan = scan_dataset(project, ref, facts.add, on_progress=on_progress)
    return scan, facts, [compact_label(rec) for rec in scan.labels]
