"""Meta-evaluation statistics: pure functions on arrays (no file I/O), returning numbers or small dataclasses.

Modules: `correlations` (Pearson/Spearman/Kendall), `partial` (partial correlation, variants
"frank" and "ranked"), `williams` (Williams test, "two_sided" / "frank_one_sided"), `bootstrap`
(document-level bootstrap CIs), `detection` (ROC AUC, balanced accuracy, macro-F1 under named
threshold policies), `calibration` (ECE and reliability diagrams), `agreement` (Fleiss' κ,
Krippendorff's α, majority share), `inputs` (validation and explicit NaN dropping). Undefined
statistics raise `StatisticsError`. Library statistics (scipy, scikit-learn, statsmodels,
krippendorff) are called behind these input checks; the Williams test, the document bootstrap, ECE
binning, the FRANK/SCALE variants and the threshold tuning are written here.
"""

from __future__ import annotations

import importlib
from typing import Any

# Public name -> the submodule defining it. Imported on first use (PEP 562), so that a job needing one statistic
# does not import every library behind the others (statsmodels, krippendorff, scikit-learn: up to 2.5 s a process).
# A literal: factlab.codedeps reads it to find the modules behind `from factlab.metaeval import name`.
LAZY_EXPORTS = {
    "BootstrapCI": "bootstrap",
    "CalibrationResult": "calibration",
    "Correlation": "correlations",
    "NanDropped": "inputs",
    "PartialCorrelation": "partial",
    "ReliabilityBin": "calibration",
    "StatisticsError": "errors",
    "ThresholdResult": "detection",
    "WilliamsResult": "williams",
    "balanced_accuracy": "detection",
    "bootstrap_ci": "bootstrap",
    "bootstrap_distribution": "bootstrap",
    "correlation": "correlations",
    "correlation_coefficient": "correlations",
    "dropna_pairs": "inputs",
    "evaluate_at_threshold": "detection",
    "expected_calibration_error": "calibration",
    "fixed05": "detection",
    "fleiss_kappa": "agreement",
    "kendall": "correlations",
    "krippendorff_alpha_nominal": "agreement",
    "macro_f1": "detection",
    "majority_agreement_share": "agreement",
    "oracle": "detection",
    "partial_correlation": "partial",
    "pearson": "correlations",
    "reliability_bins": "calibration",
    "reliability_records": "calibration",
    "residualize": "partial",
    "roc_auc": "detection",
    "spearman": "correlations",
    "threshold_policy_result": "detection",
    "tune_threshold": "detection",
    "val_tuned": "detection",
    "williams_from_scores": "williams",
    "williams_test": "williams",
}
__all__ = sorted(LAZY_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in LAZY_EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{LAZY_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *LAZY_EXPORTS})  # a set: a name already resolved is in both
