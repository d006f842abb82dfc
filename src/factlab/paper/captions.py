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
