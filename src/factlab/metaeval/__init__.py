"""Meta-evaluation statistics: pure functions on arrays and tables (no file I/O), returning numbers, small
dataclasses or DataFrames.

The statistics: `correlations` (Pearson/Spearman/Kendall), `partial` (partial correlation, variants "frank" and
"ranked"), `williams` (Williams test, "two_sided" / "frank_one_sided"), `bootstrap` (document-level bootstrap CIs),
`paired` (paired bootstrap of an AUC difference), `leaderboard` (every scorer against a benchmark's best built-in
scorer, Holm-adjusted), `detection` (ROC AUC, balanced accuracy, macro-F1 under named
threshold policies), `calibration` (ECE and reliability diagrams), `agreement` (Fleiss' κ, Krippendorff's α,
majority share), `inputs` (validation and explicit NaN dropping), `errors` (`StatisticsError`, raised where a
statistic is undefined), `variants` (the variants' and threshold policies' names, importing nothing: the commands'
choices). The analyses' pure computations on in-memory tables: `localisation` (token-level
localisation), `error_types` (FRANK's error categories), `correction` (the checker's corrections), `decisions`
(how often the checker's verdicts, spans and corrections meet consistent outputs), `explanations` (the checker's
explanations against gold QAs), `arguments` (the commands' `<benchmark>=<value>` arguments and
headline-number rounding). Library statistics (scipy, scikit-learn, statsmodels, krippendorff) are called behind
these input checks; the Williams test, the document bootstrap, ECE binning, the FRANK/SCALE variants and the
threshold tuning are written here.

The file I/O is elsewhere: `factlab.metaeval.analyses` holds the analyses that read score tables and write the
meta-evaluation's files, one per `factlab metaeval` command, each calling these statistics; the published analyses
rebuilt from released inputs are `factlab.metaeval.analyses.published`. None of the modules above imports from
`analyses`; `factlab.metaeval.cli` names the analyses' modules and imports only the one a command runs.
"""

from __future__ import annotations

import importlib
from typing import Any

# Public name -> the submodule defining it. Imported on first use (PEP 562), so that a job needing one statistic
# does not import every library behind the others (statsmodels, krippendorff, scikit-learn: up to 2.5 s a process).
# A literal: factlab.workflow.codedeps reads it to find the modules behind `from factlab.metaeval import name`.
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
    "holm_adjust": "leaderboard",
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
