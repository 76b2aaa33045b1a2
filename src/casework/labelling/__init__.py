"""Labelling: raw labels, guidelines, adjudication, and the agreement report built from them.

Entry points: :func:`dataset_agreement` and :func:`agreement_report` (agreement per slice and
guideline version).
"""

from casework.labelling.agreement_report import (
    AgreementReport,
    AgreementSettings,
    Exclusions,
    MultiRater,
    SliceAgreement,
    ToolAgreement,
    agreement_report,
    case_features,
    dataset_agreement,
)

__all__ = [
    "AgreementReport",
    "AgreementSettings",
    "Exclusions",
    "MultiRater",
    "SliceAgreement",
    "ToolAgreement",
    "agreement_report",
    "case_features",
    "dataset_agreement",
]
