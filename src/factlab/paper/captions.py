"""Every LaTeX table caption of the paper, in one place (the report's captions: workflow/report/*.rst)."""

from __future__ import annotations

DATASETS = (
    "Benchmarks and corpora built by factlab: rows, documents, systems, share of consistent outputs, "
    "mean lengths in words, and rows dropped by the adapter."
)

QASEM_CONSISTENCY = (
    "QASemConsistency per task: responses (Verifiability: sentences), QA pairs, share of QAs unsupported by "
    "majority vote, share of predicates with at least two QAs whose QAs are partly supported and partly not, and "
    "Fleiss' $\\kappa$ of the 3 votes per QA and per annotated span."
)

AGREEMENT = (
    "Agreement of the crowd votes behind QAGS (3 votes per summary sentence) and XSumFaith (up to 3 workers "
    "per summary). Fleiss' $\\kappa$ and the share of votes equal to the item's majority use the items with all "
    "votes; Krippendorff's $\\alpha$ (nominal) uses every item, including those with a missing vote."
)


DETECTION = (
    "factlab's scorers as detectors of inconsistent outputs on every scored benchmark: ROC AUC $\\times$ 100 "
    "(positive = consistent) with a document-bootstrap 95\\% CI; the difference to the benchmark's best scorer "
    "($\\times$ 100) with its paired document-bootstrap p-value; ECE with 15 equal-width and equal-mass bins and "
    "after isotonic calibration fitted on the validation cuts; balanced accuracy at 0.5, at the threshold tuned "
    "on the validation cuts, and at the evaluated set's own best threshold (oracle, optimistic)."
)

FRANK_SCORERS = (
    "FRANK's protocol for factlab's scorers (prefixed factlab:) beside FRANK's released baselines: partial "
    "Pearson correlation with the human Factuality score, the summarisation system as confounder, on all "
    "summaries and per subset, with a document-bootstrap 95\\% CI on all."
)

LOCALISATION = (
    "Token-level localisation: each scorer's per-sentence support projected onto the output's tokens (flagged "
    "when below the threshold), against XSumFaith's hallucination spans (majority of 3 workers) and WiCE's "
    "unsupported tokens; precision, recall and F1 of the unsupported class per threshold policy (flag\\_all: "
    "every token flagged), and token ROC AUC with a 95\\% CI."
)


def retrieval(settings: dict) -> str:
    return (
        "SCALE's evidence retrieval on WiCE claims with annotated supporting sentences: binary search over source "
        f"sentences ({settings['branches']} groups per step, group premise \\texttt{{{settings['group_premise']}}}) "
        "against a brute-force ranking of every sentence; recall@k of the best annotated set, hit@k (any "
        "supporting sentence found), and model calls per claim."
    )


def true_published(ece_bins: int) -> str:
    return (
        f"TRUE sets scored by the baselines whose outputs SCALE released: ROC AUC $\\times$ 100 (positive = "
        f"consistent) and expected calibration error with {ece_bins} equal-width bins. ECE is undefined (--) "
        "where a metric's scores leave [0, 1] on a set (SummaC-ZS lies in [-1, 1]; BERTScore is rescaled and "
        "leaves [0, 1] on every set but PAWS); a mean is given only where every set has a value. "
        "The 8-set mean leaves out FEVER, PAWS and VitaminC, as AlignScore's TRUE average does."
    )


def frank_baselines(variant: str) -> str:
    description = {
        "frank": "FRANK's recipe: raw scores residualised on the system, p-values from plain Pearson/Spearman "
        "tests on the residuals with n-2 df",
        "ranked": "Spearman on ranks residualised on the system, p-values from t-tests with n-2-k df",
    }[variant]
    return (
        "Partial correlation of FRANK's baseline metrics with the human Factuality score, controlling for the "
        f"summarisation system (variant \\texttt{{{variant}}}: {description}), on all FRANK summaries and on its "
        "CNN/DM and XSum subsets; rebuilt from FRANK's released scores. * marks p < 0.05."
    )


def qasem_parser(iou_threshold: float) -> str:
    return (
        f"factlab's QASem parser (MiniLM, trained offline) on the held-out test sets, gold predicates: argument "
        f"precision, recall and F1 at token IOU $\\geq$ {iou_threshold:g} (UA; LA: the question's role matches "
        f"too), predicate detection F1, and the published T5-small QASem parser's UA-F1."
    )


def aligner_mixture(ngram: int) -> str:
    return (
        "The alignment model's training mixture per origin (real corpora; synthetic FactCC- and FactEdit-style "
        "errors made from the documents of the named corpus): pairs available, sampled, removed because they "
        f"share a {ngram}-word run with any evaluated source or output, and the train / validation split "
        "(validation: whole documents)."
    )


TRUE_DETECTION = (
    "ROC AUC $\\times$ 100 of factlab's scorers on the TRUE sets (positive = consistent), with 95\\% "
    "document-bootstrap intervals, beside SummaC-ZS and SummaC-Conv rebuilt from the outputs SCALE released."
)


# Figure captions of paper/main.tex by file stem (paper/figures/<stem>.png); tables carry theirs in their .tex.
FIGURES = {
    "frank_williams": (
        "Williams tests between every pair of FRANK's baseline metrics on all FRANK summaries, metrics and human "
        "Factuality residualised on the summarisation system: each cell is the p-value that the two metrics "
        "correlate equally with Factuality (variant in the title). Metrics are ordered by their partial Pearson "
        "correlation with Factuality."
    ),
    "frank_metric_matrix": (
        "Partial Pearson correlation between FRANK's baseline metrics, controlling for the summarisation system, on "
        "all FRANK summaries where both have a score (the $r_{23}$ of the Williams tests)."
    ),
    "frank_ablation": (
        "FRANK's error-category ablation: each metric's partial correlation with human Factuality minus its partial "
        "correlation when the errors of one category (semantic frame, discourse, content verifiability) are not "
        "counted. A large positive bar means the metric's agreement with humans rests on that category."
    ),
    "screeneval_chunk_size": (
        "SCALE-large on the 614 ScreenEval summary sentences: ROC AUC (positive = consistent) and SCALE's recorded "
        "runtime (log scale) against the chunk size the transcript is split into, rebuilt from the results SCALE "
        "released."
    ),
    "screeneval_reliability": (
        "Reliability diagrams on the 614 ScreenEval summary sentences: per equal-width score bin, the share of "
        "sentences labelled consistent (bar), the mean score (tick; where a calibrated bar would end) and the count "
        "(above). Only metrics whose scores lie in [0, 1] are shown."
    ),
}
