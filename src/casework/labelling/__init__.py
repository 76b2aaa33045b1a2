"""Labelling: assignment policy, blind sheets, the label store, adjudication, guidelines, releases.

Entry points: :func:`assign_labels`, :func:`export_sheets`, :func:`import_sheets`,
:func:`labeller_queue` / :func:`blind_case` / :func:`submit_label` (one case at a time, the web),
:func:`labelling_status`, :func:`list_disagreements`, :func:`release_labels`,
:func:`bump_guideline`; the pure policy is :func:`plan_labelling` / :func:`plan_adjudication`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from casework._lazy import attach

if TYPE_CHECKING:
    from casework.labelling.agreement_report import (
        AgreementReport,
        AgreementSettings,
        SliceAgreement,
        agreement_report,
        case_features,
        dataset_agreement,
    )
    from casework.labelling.assign import AssignReport, assign_labels
    from casework.labelling.exchange import (
        ExportReport,
        ImportReport,
        SheetFile,
        export_sheets,
        import_sheets,
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
    from casework.labelling.online import (
        BlindCase,
        CaseNotHeld,
        HeldCase,
        LabellerQueue,
        WebAnswer,
        blind_case,
        labeller_queue,
        submit_label,
    )
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

__all__ = [
    "AgreementReport",
    "AgreementSettings",
    "AssignReport",
    "Assignment",
    "AssignmentPlan",
    "BlindCase",
    "Bump",
    "CaseNotHeld",
    "CaseProgress",
    "CaseStatus",
    "Contested",
    "Disagreement",
    "ExportReport",
    "Guideline",
    "Held",
    "HeldCase",
    "ImportReport",
    "LabelRelease",
    "LabellerLoad",
    "LabellerQueue",
    "LabellingMigration",
    "LabellingStatus",
    "PlannedAssignment",
    "QueueRow",
    "Round",
    "SheetFile",
    "SheetKind",
    "Skipped",
    "SliceAgreement",
    "SliceCalibration",
    "SliceStatus",
    "Snapshot",
    "WebAnswer",
    "Work",
    "agreement_report",
    "assign_labels",
    "audit_draw",
    "blind_case",
    "bump_guideline",
    "case_features",
    "csv_rows",
    "current_versions",
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
    "labeller_queue",
    "labelling_status",
    "latest_round",
    "list_disagreements",
    "list_guidelines",
    "load_work",
    "migrate_labelling",
    "parse_labellers",
    "plan_adjudication",
    "plan_labelling",
    "read_guideline",
    "read_sheet",
    "release_labels",
    "render_csv",
    "render_jsonl",
    "sheet_key",
    "sheet_line",
    "submit_label",
    "unescape_cell",
]

if not TYPE_CHECKING:  # type checkers read the imports above, not a __getattr__
    __getattr__, __dir__ = attach(
        __name__,
        {
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
            "casework.labelling.exchange": (
                "ExportReport",
                "ImportReport",
                "SheetFile",
                "export_sheets",
                "import_sheets",
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
            "casework.labelling.online": (
                "BlindCase",
                "CaseNotHeld",
                "HeldCase",
                "LabellerQueue",
                "WebAnswer",
                "blind_case",
                "labeller_queue",
                "submit_label",
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
        },
    )
