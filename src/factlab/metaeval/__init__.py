"""Meta-evaluation statistics: pure functions on arrays (no file I/O), returning numbers or small dataclasses.

Modules: `correlation` (Pearson/Spearman/Kendall), `partial` (partial correlation, variants
"frank" and "ranked"), `williams` (Williams test, "two_sided" / "frank_one_sided"), `bootstrap`
(document-level bootstrap CIs), `detection` (ROC AUC, balanced accuracy, macro-F1 under named
threshold policies), `calibration` (ECE and reliability diagrams), `agreement` (Fleiss' κ,
Krippendorff's α, majority share), `inputs` (validation and explicit NaN dropping). Undefined
statistics raise `StatisticsError`. Library statistics (scipy, scikit-learn, statsmodels,
krippendorff) are called behind these input checks; the Williams test, the document bootstrap, ECE
binning, the FRANK/SCALE variants and the threshold tuning are written here.
"""

from factlab.metaeval.agreement import fleiss_kappa, krippendorff_alpha_nominal, majority_agreement_share
from factlab.metaeval.bootstrap import BootstrapCI, bootstrap_ci, bootstrap_distribution
from factlab.metaeval.calibration import (
    CalibrationResult,
    ReliabilityBin,
    expected_calibration_error,
    reliability_bins,
    reliability_records,
)
from factlab.metaeval.correlation import Correlation, correlation, correlation_coefficient, kendall, pearson, spearman
from factlab.metaeval.detection import (
    ThresholdResult,
    balanced_accuracy,
    evaluate_at_threshold,
    fixed05,
    macro_f1,
    oracle,
    roc_auc,
    threshold_policy_result,
    tune_threshold,
    val_tuned,
)
from factlab.metaeval.errors import StatisticsError
from factlab.metaeval.inputs import NanDropped, dropna_pairs
from factlab.metaeval.partial import PartialCorrelation, partial_correlation, residualize
from factlab.metaeval.williams import WilliamsResult, williams_from_scores, williams_test

__all__ = [
    "BootstrapCI",
    "CalibrationResult",
    "Correlation",
    "NanDropped",
    "PartialCorrelation",
    "ReliabilityBin",
    "StatisticsError",
    "ThresholdResult",
    "WilliamsResult",
    "balanced_accuracy",
    "bootstrap_ci",
    "bootstrap_distribution",
    "correlation",
    "correlation_coefficient",
    "dropna_pairs",
    "evaluate_at_threshold",
    "expected_calibration_error",
    "fixed05",
    "fleiss_kappa",
    "kendall",
    "krippendorff_alpha_nominal",
    "macro_f1",
    "majority_agreement_share",
    "oracle",
    "partial_correlation",
    "pearson",
    "reliability_bins",
    "reliability_records",
    "residualize",
    "roc_auc",
    "spearman",
    "threshold_policy_result",
    "tune_threshold",
    "val_tuned",
    "williams_from_scores",
    "williams_test",
]
