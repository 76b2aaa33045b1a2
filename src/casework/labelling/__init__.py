"""Labelling: assignment policy, blind sheets, the label store, adjudication, guidelines, releases.

Entry points: :func:`assign_labels`, :func:`export_sheets`, :func:`import_sheets`,
:func:`labeller_queue` / :func:`blind_case` / :func:`submit_label` (one case at a time, the web),
:func:`labelling_status`, :func:`list_disagreements`, :func:`release_labels`,
:func:`bump_guideline`; the pure policy is :func:`plan_labelling` / :func:`plan_adjudication`.
For pages: :func:`adjudication_queue` / :func:`adjudicate`, :func:`dashboard`, :func:`list_gaps`
/ :func:`add_gap` / :func:`bump_with_gaps`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from casework._lazy import attach

if TYPE_CHECKING:
    from casework.labelling.adjudication_queue import (
        MERGE_FIELDS,
        AdjudicationChoice,
        FinalLabel,
        QueueEntry,
        adjudicate,
        adjudication_queue,
    )
    from casework.labelling.assign import AssignReport, assign_labels
    from casework.labelling.dashboard import Dashboard, SliceDashboard, dashboard
    from casework.labelling.dataset_agreement import dataset_agreement
    from casework.labelling.exchange import ExportReport, ImportReport, export_sheets, import_sheets
    from casework.labelling.gaps import GuidelineGap, bump_with_gaps, list_gaps
    from casework.labelling.guidelines import list_guidelines, read_guideline
    from casework.labelling.migration import migrate_labelling
    from casework.labelling.model import parse_labellers
    from casework.labelling.online import (
        BlindCase,
        CaseNotHeld,
        HeldCase,
        LabelConflict,
        LabellerQueue,
        States,
        WebAnswer,
        blind_case,
        labeller_queue,
        submit_label,
    )
    from casework.labelling.release import LabelRelease, release_labels
    from casework.labelling.signing import sheet_key
    from casework.labelling.status import LabellingStatus, labelling_status, list_disagreements

__all__ = [
    "MERGE_FIELDS",
    "AdjudicationChoice",
    "AssignReport",
    "BlindCase",
    "CaseNotHeld",
    "Dashboard",
    "ExportReport",
    "FinalLabel",
    "GuidelineGap",
    "HeldCase",
    "ImportReport",
    "LabelConflict",
    "LabelRelease",
    "LabellerQueue",
    "LabellingStatus",
    "QueueEntry",
    "SliceDashboard",
    "States",
    "WebAnswer",
    "adjudicate",
    "adjudication_queue",
    "assign_labels",
    "blind_case",
    "bump_with_gaps",
    "dashboard",
    "dataset_agreement",
    "export_sheets",
    "import_sheets",
    "labeller_queue",
    "labelling_status",
    "list_disagreements",
    "list_gaps",
    "list_guidelines",
    "migrate_labelling",
    "parse_labellers",
    "read_guideline",
    "release_labels",
    "sheet_key",
    "submit_label",
]

if not TYPE_CHECKING:  # type checkers read the imports above, not a __getattr__
    __getattr__, __dir__ = attach(
        __name__,
        {
            "casework.labelling.adjudication_queue": (
                "MERGE_FIELDS",
                "AdjudicationChoice",
                "FinalLabel",
                "QueueEntry",
                "adjudicate",
                "adjudication_queue",
            ),
            "casework.labelling.assign": (
                "AssignReport",
                "assign_labels",
            ),
            "casework.labelling.dashboard": (
                "Dashboard",
                "SliceDashboard",
                "dashboard",
            ),
            "casework.labelling.dataset_agreement": ("dataset_agreement",),
            "casework.labelling.exchange": (
                "ExportReport",
                "ImportReport",
                "export_sheets",
                "import_sheets",
            ),
            "casework.labelling.gaps": (
                "GuidelineGap",
                "bump_with_gaps",
                "list_gaps",
            ),
            "casework.labelling.guidelines": (
                "list_guidelines",
                "read_guideline",
            ),
            "casework.labelling.migration": ("migrate_labelling",),
            "casework.labelling.online": (
                "BlindCase",
                "CaseNotHeld",
                "HeldCase",
                "LabelConflict",
                "LabellerQueue",
                "States",
                "WebAnswer",
                "blind_case",
                "labeller_queue",
                "submit_label",
            ),
            "casework.labelling.model": ("parse_labellers",),
            "casework.labelling.release": (
                "LabelRelease",
                "release_labels",
            ),
            "casework.labelling.signing": ("sheet_key",),
            "casework.labelling.status": (
                "LabellingStatus",
                "labelling_status",
                "list_disagreements",
            ),
        },
    )
