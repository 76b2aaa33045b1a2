"""Labelling: assignment policy, blind sheets, the label store, adjudication, guidelines, releases.

Entry points: :func:`assign_labels`, :func:`export_sheets`, :func:`import_sheets`,
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
        Adjudicated,
        AdjudicationChoice,
        AdjudicationQueue,
        FinalLabel,
        QueueEntry,
        ShownLabel,
        adjudicate,
        adjudication_queue,
    )
    from casework.labelling.agreement_report import (
        AgreementReport,
        AgreementSettings,
        SliceAgreement,
        agreement_report,
        case_features,
        dataset_agreement,
    )
    from casework.labelling.assign import AssignReport, assign_labels
    from casework.labelling.dashboard import (
        Dashboard,
        LabellerDashboard,
        SliceDashboard,
        dashboard,
    )
    from casework.labelling.exchange import (
        ExportReport,
        ImportReport,
        SheetFile,
        export_sheets,
        import_sheets,
    )
    from casework.labelling.gaps import (
        GapBump,
        GuidelineGap,
        add_gap,
        bump_with_gaps,
        check_person,
        list_gaps,
    )
    from casework.labelling.guidelines import (
        Bump,
        Guideline,
        bump_guideline,
        current_versions,
        guideline_path,
        list_guidelines,
        read_guideline,
    )
    from casework.labelling.migration import LabellingMigration, migrate_labelling
    from casework.labelling.model import Assignment, parse_labellers
    from casework.labelling.policy import (
        AssignmentPlan,
        Contested,
        PlannedAssignment,
        QueueRow,
        Skipped,
        audit_draw,
        is_calibrated,
        keeps_second_label,
        plan_adjudication,
        plan_labelling,
    )
    from casework.labelling.release import Held, LabelRelease, release_labels
    from casework.labelling.rounds import (
        Round,
        decide_round,
        differing_fields,
        final_label,
        latest_round,
    )
    from casework.labelling.sheets import (
        SheetKind,
        csv_rows,
        escape_cell,
        read_sheet,
        render_csv,
        render_jsonl,
        sheet_line,
        unescape_cell,
    )
    from casework.labelling.signing import sheet_key
    from casework.labelling.snapshot import CaseProgress, CaseStatus, SliceCalibration, Snapshot
    from casework.labelling.status import (
        Disagreement,
        LabellerLoad,
        LabellingStatus,
        SliceStatus,
        labelling_status,
        list_disagreements,
    )
    from casework.labelling.store import Work, load_work
    from casework.labelling.timings import (
        ACCEPTING_DECISIONS,
        GENERATED_CASE_KIND,
        Timings,
        read_timings,
    )

__all__ = [
    "ACCEPTING_DECISIONS",
    "GENERATED_CASE_KIND",
    "MERGE_FIELDS",
    "Adjudicated",
    "AdjudicationChoice",
    "AdjudicationQueue",
    "AgreementReport",
    "AgreementSettings",
    "AssignReport",
    "Assignment",
    "AssignmentPlan",
    "Bump",
    "CaseProgress",
    "CaseStatus",
    "Contested",
    "Dashboard",
    "Disagreement",
    "ExportReport",
    "FinalLabel",
    "GapBump",
    "Guideline",
    "GuidelineGap",
    "Held",
    "ImportReport",
    "LabelRelease",
    "LabellerDashboard",
    "LabellerLoad",
    "LabellingMigration",
    "LabellingStatus",
    "PlannedAssignment",
    "QueueEntry",
    "QueueRow",
    "Round",
    "SheetFile",
    "SheetKind",
    "ShownLabel",
    "Skipped",
    "SliceAgreement",
    "SliceCalibration",
    "SliceDashboard",
    "SliceStatus",
    "Snapshot",
    "Timings",
    "Work",
    "add_gap",
    "adjudicate",
    "adjudication_queue",
    "agreement_report",
    "assign_labels",
    "audit_draw",
    "bump_guideline",
    "bump_with_gaps",
    "case_features",
    "check_person",
    "csv_rows",
    "current_versions",
    "dashboard",
    "dataset_agreement",
    "decide_round",
    "differing_fields",
    "escape_cell",
    "export_sheets",
    "final_label",
    "guideline_path",
    "import_sheets",
    "is_calibrated",
    "keeps_second_label",
    "labelling_status",
    "latest_round",
    "list_disagreements",
    "list_gaps",
    "list_guidelines",
    "load_work",
    "migrate_labelling",
    "parse_labellers",
    "plan_adjudication",
    "plan_labelling",
    "read_guideline",
    "read_sheet",
    "read_timings",
    "release_labels",
    "render_csv",
    "render_jsonl",
    "sheet_key",
    "sheet_line",
    "unescape_cell",
]

if not TYPE_CHECKING:  # type checkers read the imports above, not a __getattr__
    __getattr__, __dir__ = attach(
        __name__,
        {
            "casework.labelling.adjudication_queue": (
                "MERGE_FIELDS",
                "Adjudicated",
                "AdjudicationChoice",
                "AdjudicationQueue",
                "FinalLabel",
                "QueueEntry",
                "ShownLabel",
                "adjudicate",
                "adjudication_queue",
            ),
            "casework.labelling.agreement_report": (
                "AgreementReport",
                "AgreementSettings",
                "SliceAgreement",
                "agreement_report",
                "case_features",
                "dataset_agreement",
            ),
            "casework.labelling.assign": (
                "AssignReport",
                "assign_labels",
            ),
            "casework.labelling.dashboard": (
                "Dashboard",
                "LabellerDashboard",
                "SliceDashboard",
                "dashboard",
            ),
            "casework.labelling.exchange": (
                "ExportReport",
                "ImportReport",
                "SheetFile",
                "export_sheets",
                "import_sheets",
            ),
            "casework.labelling.gaps": (
                "GapBump",
                "GuidelineGap",
                "add_gap",
                "bump_with_gaps",
                "check_person",
                "list_gaps",
            ),
            "casework.labelling.guidelines": (
                "Bump",
                "Guideline",
                "bump_guideline",
                "current_versions",
                "guideline_path",
                "list_guidelines",
                "read_guideline",
            ),
            "casework.labelling.migration": (
                "LabellingMigration",
                "migrate_labelling",
            ),
            "casework.labelling.model": (
                "Assignment",
                "parse_labellers",
            ),
            "casework.labelling.policy": (
                "AssignmentPlan",
                "Contested",
                "PlannedAssignment",
                "QueueRow",
                "Skipped",
                "audit_draw",
                "is_calibrated",
                "keeps_second_label",
                "plan_adjudication",
                "plan_labelling",
            ),
            "casework.labelling.release": (
                "Held",
                "LabelRelease",
                "release_labels",
            ),
            "casework.labelling.rounds": (
                "Round",
                "decide_round",
                "differing_fields",
                "final_label",
                "latest_round",
            ),
            "casework.labelling.sheets": (
                "SheetKind",
                "csv_rows",
                "escape_cell",
                "read_sheet",
                "render_csv",
                "render_jsonl",
                "sheet_line",
                "unescape_cell",
            ),
            "casework.labelling.signing": ("sheet_key",),
            "casework.labelling.snapshot": (
                "CaseProgress",
                "CaseStatus",
                "SliceCalibration",
                "Snapshot",
            ),
            "casework.labelling.status": (
                "Disagreement",
                "LabellerLoad",
                "LabellingStatus",
                "SliceStatus",
                "labelling_status",
                "list_disagreements",
            ),
            "casework.labelling.store": (
                "Work",
                "load_work",
            ),
            "casework.labelling.timings": (
                "ACCEPTING_DECISIONS",
                "GENERATED_CASE_KIND",
                "Timings",
                "read_timings",
            ),
        },
    )
