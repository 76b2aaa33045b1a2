"""Inter-rater agreement: pure statistics, no I/O (kappa, AC1, Fleiss, Krippendorff, bands, clusters).

Entry points: :func:`proportion_interval`, :func:`kappa_interval`, :func:`more_needed`,
:func:`rogan_gladen`, :func:`corrected_rate`, :func:`combined_corrected_rate` (a judge's rates
against people and pass rates corrected for its error), :func:`cohen_kappa`, :func:`bootstrap_kappa`, :func:`gwet_ac1`, :func:`fleiss_kappa`,
:func:`krippendorff_alpha_nominal`, :func:`binary_agreement`, :func:`classify`,
:func:`over_represented`; :func:`agreement_report` (the report of a dataset's cases and raw labels,
per slice and guideline version). ``casework.labelling.dataset_agreement`` reads a dataset for it.
"""

from casework.agreement._rates import kappa_interval
from casework.agreement.fleiss import fleiss_kappa
from casework.agreement.gwet import gwet_ac1
from casework.agreement.kappa import cohen_kappa
from casework.agreement.krippendorff import krippendorff_alpha_nominal
from casework.agreement.report import AgreementReport, SliceAgreement, agreement_report

__all__ = [
    "AgreementReport",
    "SliceAgreement",
    "agreement_report",
    "cohen_kappa",
    "fleiss_kappa",
    "gwet_ac1",
    "kappa_interval",
    "krippendorff_alpha_nominal",
]
