"""Inter-rater agreement: pure statistics, no I/O (kappa, AC1, Fleiss, Krippendorff, bands, clusters).

Entry points: :func:`cohen_kappa`, :func:`bootstrap_kappa`, :func:`gwet_ac1`, :func:`fleiss_kappa`,
:func:`krippendorff_alpha_nominal`, :func:`binary_agreement`, :func:`classify`,
:func:`over_represented`. ``casework.labelling.agreement_report`` applies them to a dataset.
"""

from casework.agreement.bands import Band, BandEdges, BandVerdict, Status, band_of, classify
from casework.agreement.binary import BinaryAgreement, binary_agreement
from casework.agreement.bootstrap import BootstrapCI, bootstrap_kappa
from casework.agreement.clusters import (
    FeatureCluster,
    Scalar,
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
from casework.agreement.table import (
    ConfusionMatrix,
    category_order,
    confusion_matrix,
    rating_counts,
)

__all__ = [
    "Band",
    "BandEdges",
    "BandVerdict",
    "BinaryAgreement",
    "BootstrapCI",
    "ClassKappa",
    "CohenKappa",
    "ConfusionMatrix",
    "FeatureCluster",
    "FleissKappa",
    "GwetAC",
    "KappaStatus",
    "KrippendorffAlpha",
    "Scalar",
    "Status",
    "band_of",
    "binary_agreement",
    "bootstrap_kappa",
    "category_order",
    "classify",
    "cohen_kappa",
    "cohen_kappa_from_table",
    "confusion_matrix",
    "featurize",
    "flatten",
    "fleiss_kappa",
    "fleiss_kappa_from_ratings",
    "gwet_ac1",
    "gwet_ac2",
    "krippendorff_alpha_nominal",
    "normal_quantile",
    "one_vs_rest_kappa",
    "over_represented",
    "rating_counts",
]
