"""Inter-rater agreement: pure statistics, no I/O (kappa, AC1, Fleiss, Krippendorff, bands, clusters).

Entry points: :func:`proportion_interval`, :func:`kappa_interval`, :func:`more_needed`,
:func:`rogan_gladen`, :func:`corrected_rate`, :func:`combined_corrected_rate` (a judge's rates
against people and pass rates corrected for its error), :func:`cohen_kappa`, :func:`bootstrap_kappa`, :func:`gwet_ac1`, :func:`fleiss_kappa`,
:func:`krippendorff_alpha_nominal`, :func:`binary_agreement`, :func:`classify`,
:func:`over_represented`; :func:`agreement_report` (the report of a dataset's cases and raw labels,
per slice and guideline version). ``casework.labelling.dataset_agreement`` reads a dataset for it.
"""

from casework.agreement._rates import (
    CorrectedRate,
    IntervalMethod,
    KappaInterval,
    Proportion,
    RatePart,
    combined_corrected_rate,
    corrected_rate,
    kappa_interval,
    more_needed,
    proportion_interval,
    rogan_gladen,
)
from casework.agreement.bands import Band, BandEdges, BandVerdict, Status, band_of, classify
from casework.agreement.binary import BinaryAgreement, binary_agreement
from casework.agreement.bootstrap import BootstrapCI, bootstrap_kappa
from casework.agreement.clusters import (
    FeatureCluster,
    Scalar,
    disagreement_clusters,
    featurize,
    flatten,
    over_represented,
)
from casework.agreement.fleiss import FleissKappa, fleiss_kappa, fleiss_kappa_from_ratings
from casework.agreement.gwet import GwetAC, gwet_ac1, gwet_ac2
from casework.agreement.kappa import (
    ClassKappa,
    CohenKappa,
    KappaStatus,
    cohen_kappa,
    cohen_kappa_from_table,
    normal_quantile,
    one_vs_rest_kappa,
)
from casework.agreement.krippendorff import KrippendorffAlpha, krippendorff_alpha_nominal
from casework.agreement.report import (
    AgreementReport,
    AgreementSettings,
    SliceAgreement,
    agreement_report,
    case_features,
)
from casework.agreement.table import (
    ConfusionMatrix,
    category_order,
    confusion_matrix,
    rating_counts,
)

__all__ = [
    "AgreementReport",
    "AgreementSettings",
    "Band",
    "BandEdges",
    "BandVerdict",
    "BinaryAgreement",
    "BootstrapCI",
    "ClassKappa",
    "CohenKappa",
    "ConfusionMatrix",
    "CorrectedRate",
    "FeatureCluster",
    "FleissKappa",
    "GwetAC",
    "IntervalMethod",
    "KappaInterval",
    "KappaStatus",
    "KrippendorffAlpha",
    "Proportion",
    "RatePart",
    "Scalar",
    "SliceAgreement",
    "Status",
    "agreement_report",
    "band_of",
    "binary_agreement",
    "bootstrap_kappa",
    "case_features",
    "category_order",
    "classify",
    "cohen_kappa",
    "cohen_kappa_from_table",
    "combined_corrected_rate",
    "confusion_matrix",
    "corrected_rate",
    "disagreement_clusters",
    "featurize",
    "flatten",
    "fleiss_kappa",
    "fleiss_kappa_from_ratings",
    "gwet_ac1",
    "gwet_ac2",
    "kappa_interval",
    "krippendorff_alpha_nominal",
    "more_needed",
    "normal_quantile",
    "one_vs_rest_kappa",
    "over_represented",
    "proportion_interval",
    "rating_counts",
    "rogan_gladen",
]
