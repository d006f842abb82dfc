"""Every caption of the paper and of the Snakemake report, in one place.

The paper's tables carry their captions in their .tex (factlab.paper.tables, from the constants and functions
below); its figures take theirs from FIGURES (paper/main.tex). `snakemake --report` reads reStructuredText
captions from workflow/report/<stem>.rst: those files are generated from REPORT_CAPTIONS, which reuses the
paper's wording (naming the params.yaml key where the paper names its value) and converts it with to_rst:

    python -m factlab.paper.captions            # rewrite workflow/report/<stem>.rst for every stem
    python -m factlab.paper.captions --check    # exit 1 naming the stale files (tests/test_paper_captions.py)
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from pathlib import Path


def _texttt(text: str) -> str:
    """Typewriter text (a key, a file, a column) in the captions' LaTeX flavour; to_rst makes it ``text``."""
    return "\\texttt{" + text.replace("_", "\\_") + "}"


def _param(key: str) -> str:
    """The report's stand-in for a value the paper prints: the params.yaml key that sets it."""
    return f"params.yaml {_texttt(key)}"


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
    "on the validation cuts, and at the evaluated set's own best threshold (oracle, optimistic). A row named "
    "B[column=value] breaks benchmark B down by a group column: its examples with that value, or, where those hold "
    "one label only, those against every example of the other label, named B[column=value vs all consistent] (WiCE's "
    "partially supported claims against the supported ones). On "
    "qasem\\_consistency (dev and test pooled) the qasem\\_consistency scorer's support head was chosen on the dev "
    "split's QAs; its test-split QA-level results are in the QA-detection table. The ensemble (a logistic-regression "
    "stack of other scorers' scores) is fitted per benchmark on the validation cuts less the examples sharing an 8-word "
    "run with that benchmark, so it has no tuned threshold and no isotonic calibration; its regularisation was chosen "
    "by out-of-fold validation AUC, for ranking, and pulls its probabilities towards the base rate (its ECE and "
    "balanced accuracy at 0.5 suffer). A scorer marked (sample) scored a seeded sample of the benchmark "
    "(score.sample; n is its size): its AUC is on those examples, its difference to the best on the examples both "
    "scored, and the best is always a scorer of the whole benchmark."
)

LEADERBOARD = (
    "Leaderboard: every scorer, built in or a user's, on every scored benchmark but the validation cuts, by AUC within "
    "each benchmark. ROC AUC $\\times$ 100 (positive = consistent) with a document-bootstrap 95\\% CI; the "
    "benchmark's reference, marked (reference), is its built-in scorer of the whole benchmark with the highest AUC. "
    "Every other scorer's AUC minus the reference's ($\\times$ 100) is taken on the examples both scored, with its "
    "95\\% CI and two-sided p-value from a paired document bootstrap (both AUCs recomputed on each resample of "
    "source documents). Holm: the p-values of all the table's comparisons adjusted together by Holm's step-down "
    "method; significant: below 0.05 after that adjustment. A scorer marked (sample) scored a seeded sample of the "
    "benchmark (score.sample; n is its size) and is never the reference."
)

DECISIONS = (
    "How often the checker cries wolf: its decisions on every labelled benchmark AlignScore scored but the validation "
    "cuts that chose its thresholds, on the benchmark's test split where it has one (split: test), else on all its "
    "labelled outputs (all). Verdict: inconsistent below the score threshold recorded with the checker, consistent at "
    "or above it, and none (uncertain) inside the uncertain band recorded with it; spans: the runs of words whose "
    "probability of being unsupported passes its token threshold. Consistent flagged: the share of the outputs "
    "humans rated consistent that it calls inconsistent; inconsistent caught: the share of the inconsistent outputs "
    "it calls inconsistent; coverage: the share of all outputs given a verdict; consistent with a span: the share of "
    "the consistent outputs in which it marks a span; consistent, correction offered: the share of the consistent "
    "outputs it calls inconsistent and marks a span in, for which it offers a correction (whether an edit then "
    "changes the text is not counted here). Every share is of all the outputs of its class, those without a verdict "
    "included; in \\%, with its Wilson 95\\% interval."
)

CALIBRATION_GAIN = (
    "What calibrating the checker on a user's own labelled sample gains: on each benchmark AlignScore scored with a "
    "validation and a test split, the test split's balanced accuracy ($\\times$ 100) at the checker's global threshold "
    "(tuned on the pooled validation cuts; * marks the benchmarks among them) against the threshold "
    "\\texttt{factlab calibrate} chooses on a stratified draw of the benchmark's validation examples (calibrated on: "
    "their number; the whole split where it is smaller). Calibrated: the mean over seeded draws, with the range of "
    "the middle 95\\% of draws; gain: calibrated minus global, with its range; draws better: the share of draws whose "
    "threshold beats the global one on the test split; whole validation: the threshold tuned on every validation "
    "example of the benchmark, and that threshold, to set beside the global one. A verdict here is the threshold's "
    "alone (no uncertain band)."
)

FRANK_SCORERS = (
    "FRANK's protocol for factlab's scorers (prefixed factlab:) beside FRANK's released baselines: partial "
    "Pearson correlation with the human Factuality score, the summarisation system as confounder, on all "
    "summaries and per subset, with a document-bootstrap 95\\% CI on all. factlab ensemble is a logistic-regression "
    "stack of other factlab scorers fitted on the SummaC validation cuts less every example sharing an 8-word run with "
    "FRANK's texts, its regularisation chosen by out-of-fold AUC on those cuts. The last column is the two-sided "
    "Williams test of each metric's partial correlation against the best one's (the top row of those that scored every "
    "summary), on the summaries both scored; a pair of released baselines is not tested. A scorer marked (sample) "
    "scored a seeded sample of the summaries (score.sample; n is its size): its correlations are on those."
)

SUMMEVAL_SCORERS = (
    "FRANK's protocol on SummEval (100 CNN/DM articles, 16 systems): partial Pearson correlation of each factlab scorer "
    "with the experts' mean consistency rating, the summarisation system as confounder, on every scored summary (all) and "
    "on the summaries that were not tuning examples (held\\_out: SummaC's SummEval validation cut, on which "
    "AlignScore's head and chunk size and every threshold were chosen, holds one summary of each article); on "
    "held\\_out, a document-bootstrap 95\\% CI and the two-sided Williams test of each scorer against the best one "
    "(the top row of those that scored every summary), on the summaries both scored. A scorer marked (sample) scored a "
    "seeded sample of the summaries (score.sample; n is its size): its correlations are on those."
)

QA_DECOMPOSITION = (
    "QASemConsistency's decomposition measured on its own benchmark, one model, aggregation and threshold: ROC AUC "
    "$\\times$ 100 (positive = consistent) of the response score when the response is decomposed into the annotated "
    "QAs, into factlab's parser's QAs (the cost of an automatic decomposition), or into its sentences (the value of "
    "QAs); and per annotated QA, the AUC of the QA's own score against that of the sentence holding it, with their "
    "difference and a response-bootstrap 95\\% CI. The scorer's support head was chosen on the dev split, which "
    "these rows pool with test."
)

QA_DETECTION = (
    "QASemConsistency's QA-level detection on its test split (Cattan et al., 2024): each annotated QA (label: "
    "majority of 3 votes) scored against its source; balanced accuracy $\\times$ 100 with a QA predicted supported "
    "iff its score $\\geq$ 0.5 (the paper's protocol, no tuning) and ROC AUC $\\times$ 100 (positive = supported), "
    "each with a 95\\% CI that resamples source documents (the test set's sampling of this scorer's accuracy only: "
    "a published system's value inside it is not shown to be equal, which needs a paired comparison), and "
    "balanced accuracy at one threshold per scorer tuned on the dev split. factlab: qasem\\_consistency reads each QA as "
    "one hypothesis (question, a space, the answer; max over source chunks); the other scorers read it as the "
    "benchmark's output text, which those that split sentences see as two (question, answer). "
    "qasem\\_consistency's support head was chosen on the dev split. n (test): the test QAs a scorer scored; one marked "
    "(sample) scored a seeded sample of the QAs (score.sample). Published rows: balanced accuracy at 0.5 as reported."
)

LOCALISATION = (
    "Token-level localisation: each scorer's per-sentence support projected onto the output's tokens (flagged "
    "when below the threshold; qasem\\_consistency: the lowest support of the QAs whose predicate or answer covers "
    "the token, 1 for a token in no QA; alignscore\\_tokens: the aligner's token head, a token's support being "
    "1 - P(unsupported) of its least supported word piece, each piece's lowest over the source's chunks; "
    "alignscore\\_localiser: the token localiser, the head's word probabilities with the source's word and bigram "
    "novelty combined by weights fit on the validation tokens of both gold tables), against "
    "XSumFaith's hallucination spans (majority of 3 workers) and WiCE's unsupported tokens; precision, recall and "
    "F1 of the unsupported class per threshold policy, over tokens and over characters (char: the characters of "
    "flagged tokens that are in unsupported tokens, over all flagged characters for precision and all unsupported "
    "ones for recall, pooled over outputs, whitespace between tokens not counted: RAGTruth's and LettuceDetect's "
    "span metric), and token ROC AUC. Beside each scorer, two floors on its tokens: flag\\_all flags every token "
    "(recall 1, precision the share of unsupported tokens or characters); lexical\\_floor flags each token with a "
    "word, lower-cased, that its source lacks (its AUC: of these 0/1 flags). F1, char F1 and AUC with 95\\% CIs "
    "from a bootstrap over source documents. "
    "Annotators: how far the workers agree on the evaluated outputs (all of them, scored or not), the mean over pairs "
    "of workers of one's token F1 against the other's marks, and Fleiss' $\\kappa$ over tokens. Evidence: retrieval "
    "of WiCE's annotated supporting sentences (dev and test claims; n counts claims, tokens elsewhere), recall@k of "
    "the best annotated set by SCALE's binary search, by ranking every sentence, and by ranking the sentences of the "
    "best AlignScore chunk (best\\_chunk, the evidence factlab reports; the retrieval table has the costs)."
)


ERROR_TYPES = (
    "Error types on FRANK's test summaries: does a summary have an error of the category (its annotated share of "
    "error-free sentences below 1)? type head: the aligner's error-type head, trained on the types of factlab's "
    "synthetic errors only, scoring a summary by its most unsupported sentence of that type ((1 - support) x "
    "P(type)); unsupported: 1 - the AlignScore score, the same for every category (what knowing the type adds); "
    "rule: the share of the summary's words of the category's kind its source lacks (entity nouns, numbers and "
    "dates, verbs, content words) or its pronoun count (CorefE); majority: a constant; perfect detector, a "
    "reference: the annotations' own 'has any of the five errors', the AUC of a detector that is always right but "
    "never types. ROC AUC (the type head's with a 95\\% CI from a bootstrap over articles; for the type head, "
    "unsupported and rule also among the summaries with an error: how well each tells the types apart, 0.5 for a "
    "constant) and F1 at the threshold that maximises F1 on FRANK's validation split; macro: the mean AUC over the "
    "five categories."
)

CORRECTION = (
    "The checker's suggested corrections of FRANK's test outputs, per system: the spans its token localiser marks, "
    "each replaced by a number or name of its evidence sentences or deleted, an edit kept only when the checker "
    "then finds the sentence supported. Judge: SummaC-ZS, which did not choose the edits (same aligner weights), at "
    "the threshold that maximises its balanced accuracy on FRANK's validation split; consistent: the share of "
    "outputs it rates consistent before and after correction; over-correction: the share of the outputs humans "
    "rated consistent (human-consistent) that were changed at all (over-corrected), with its Wilson 95\\% interval, "
    "wide where a system has few such outputs; ROUGE-L: F1 of each changed output to its original. Restore: "
    "sentences of FRANK's test articles (no training used them) corrupted by factlab's synthetic transforms "
    "(FRANK type in brackets), each checked against its article: the share corrected back to the original exactly."
)

EXPLANATIONS = (
    "Whether the checker's explanations point at what annotators found unsupported, on QASemConsistency's responses "
    "(CLIFF summaries, FActScore biographies, Verifiability sentences) with their QA-SRL/QANom QAs voted supported or "
    "not. The checker reads each response against its source at its recorded thresholds (chosen on WiCE dev). "
    "Pointed at: the share of unsupported gold QAs whose predicate or answer tokens a flagged span overlaps; "
    "on an unsupported QA: the share of flagged spans overlapping an unsupported QA's predicate or answer; chance: "
    "that share for each span slid over every position of its response. 95\\% CIs from a bootstrap over responses."
)


def _retrieval(search: str) -> str:
    return (
        "Evidence retrieval on WiCE claims with annotated supporting sentences, per split: SCALE's binary search over "
        f"source sentences ({search}) "
        "against a brute-force ranking of every sentence and a ranking of the sentences of the best AlignScore chunk "
        "(best\\_chunk: the evidence the AlignScore scorer and factlab check report); recall@k of the best annotated "
        "set, hit@k (any supporting sentence found), and model calls per claim."
    )


def retrieval(settings: dict) -> str:
    return _retrieval(f"{settings['branches']} groups per step, group premise \\texttt{{{settings['group_premise']}}}")


def _true_published(ece: str) -> str:
    return (
        f"TRUE sets scored by the baselines whose outputs SCALE released: ROC AUC $\\times$ 100 (positive = "
        f"consistent) and expected calibration error with {ece}. ECE is undefined (--) "
        "where a metric's scores leave [0, 1] on a set (SummaC-ZS lies in [-1, 1]; BERTScore is rescaled and "
        "leaves [0, 1] on every set but PAWS); a mean is given only where every set has a value. "
        "The 8-set mean leaves out FEVER, PAWS and VitaminC, as AlignScore's TRUE average does."
    )


def true_published(ece_bins: int) -> str:
    return _true_published(f"{ece_bins} equal-width bins")


# metaeval.frank.partial_variant: how the partial correlation is computed and tested.
FRANK_VARIANTS = {
    "frank": "FRANK's recipe: raw scores residualised on the system, p-values from plain Pearson/Spearman "
    "tests on the residuals with n-2 df",
    "ranked": "Spearman on ranks residualised on the system, p-values from t-tests with n-2-k df",
}


def _frank_baselines(variant: str) -> str:
    return (
        "Partial correlation of FRANK's baseline metrics with the human Factuality score, controlling for the "
        f"summarisation system ({variant}), on all FRANK summaries and on its "
        "CNN/DM and XSum subsets; rebuilt from FRANK's released scores. * marks p < 0.05."
    )


def frank_baselines(variant: str) -> str:
    return _frank_baselines(f"variant \\texttt{{{variant}}}: {FRANK_VARIANTS[variant]}")


def _qasem_parser(iou: str) -> str:
    return (
        f"factlab's QASem parser (MiniLM, trained offline) on the held-out test sets, gold predicates: argument "
        f"precision, recall and F1 at token IOU $\\geq$ {iou} (UA; LA: the question's role matches "
        f"too), with 95\\% bootstrap intervals of the F1s over the test set's sentences (what a retrained parser's move "
        f"is read against), predicate detection F1, and the published T5-small QASem parser's UA-F1."
    )


def qasem_parser(iou_threshold: float) -> str:
    return _qasem_parser(f"{iou_threshold:g}")


def _aligner_mixture(run: str) -> str:
    return (
        "The alignment model's training mixture per origin (real corpora; synthetic FactCC- and FactEdit-style "
        "errors made from the documents of the named corpus): pairs available, sampled, removed because they "
        f"share a {run} with any evaluated source or output, and the train / validation split "
        "(validation: whole documents)."
    )


def aligner_mixture(ngram: int) -> str:
    return _aligner_mixture(f"{ngram}-word run")


def _pipeline_cost(throughput: str) -> str:
    return (
        "What the run cost, from the Snakemake benchmark file of every job: per pipeline stage and rule, the jobs, "
        "their summed wall and CPU seconds (summed over jobs, so above the run's wall time when jobs ran in "
        "parallel), the elapsed seconds during which at least one of the jobs ran (overlapping jobs count once and "
        "a pause between runs that built the tree not at all; in the total row, the run's wall time less the time "
        "when only the unbenchmarked data builds and paper ran), the longest job and the largest peak "
        "resident memory (MB). " + throughput
    )


def pipeline_cost(throughput: dict) -> str:
    return _pipeline_cost(
        f"Scoring engine: {throughput['engine_pairs_per_s']:.1f} pairs/s against {throughput['reference_pairs_per_s']:.1f} "
        f"for AlignScore's reference loop on the same {throughput['pairs']} real pairs ({throughput['device']}; the engine "
        f"in {throughput['precision']}, the reference loop in fp32; speedup {throughput['speedup']:.2f})."
    )


SCORING_THROUGHPUT = (
    "Every scorer's throughput in this run, from the benchmark files of its scoring jobs (one per benchmark and "
    "shard), summed over the benchmarks it scored: examples, words (the source's and the output's of each scored "
    "example), the premise-hypothesis pairs it ran through the model (engine scorers; cache hits included), the "
    "jobs' summed wall and CPU seconds, the largest peak resident memory (MB), and examples, words and pairs per "
    "wall second, start-up and model load included. Per scorer and benchmark, with the engine's own pairs per "
    f"second of scoring: {_texttt('results/paper/scoring_throughput.csv')}."
)


TRUE_DETECTION = (
    "ROC AUC $\\times$ 100 of factlab's scorers on the TRUE sets (positive = consistent), with 95\\% "
    "document-bootstrap intervals, beside the metrics whose per-example scores SCALE released (columns "
    "published\\_*), entered as a user's scores are. "
    "On BEGIN and Q2, whose sources are a few dozen words, AlignScore and SCALE read the same pairs with the "
    "same model, so their scores coincide."
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
    "true_reliability": (
        "Reliability diagrams of factlab's scorers on the TRUE sets, pooled: per equal-width score bin, the share of "
        "outputs labelled consistent (bar), the mean score (tick) and the count (above); each scorer raw (where its "
        "scores lie in [0, 1]) and after isotonic calibration fitted on the validation benchmarks only."
    ),
    "detection_reliability": (
        "Reliability diagrams of factlab's scorers pooled over every scored benchmark that is not a validation "
        "benchmark: share consistent per equal-width score bin (bar), mean score (tick), count (above); raw and after "
        "isotonic calibration fitted on the validation benchmarks."
    ),
    "frank_scorers_williams": (
        "Williams tests between factlab's scorers and the released metrics they are compared with, on the FRANK "
        "summaries the factlab scorers scored (a scorer of a seeded sample, score.sample: on the summaries both scored), "
        "scores and human Factuality residualised on the summarisation system: "
        "each cell is the p-value that the two correlate equally with Factuality (variant in the title). Ordered by "
        "partial Pearson correlation with Factuality."
    ),
    "frank_scorers_matrix": (
        "Partial Pearson correlation between factlab's scorers and the released metrics they are compared with, "
        "controlling for the summarisation system, on the FRANK summaries both scored (a scorer of a seeded sample, "
        "score.sample, on its sample; the $r_{23}$ of the Williams tests): which scorers agree with each other beyond "
        "their systems' means."
    ),
    "frank_scorers_ablation": (
        "FRANK's error-category ablation applied to factlab's scorers, beside the released metrics they are compared "
        "with: each one's partial correlation with human Factuality minus its partial correlation when the errors of "
        "one category are not counted, on the FRANK summaries the factlab scorers scored (a scorer of a seeded sample, "
        "score.sample: on its sample; no bar where the flipped rating is one per system among its summaries)."
    ),
    "screeneval_chunk_size": (
        "SCALE-large on the 614 ScreenEval summary sentences: ROC AUC (positive = consistent) and SCALE's recorded "
        "runtime (log scale) against the chunk size the transcript is split into, rebuilt from the results SCALE "
        "released."
    ),
    "alignscore_tuning": (
        "factlab's own chunk-size sweep: AlignScore's ROC AUC (positive = consistent) on the validation benchmarks "
        "against the words per source chunk, one panel per support head of the trained aligner. Thick lines: the "
        "macro mean over the benchmarks, the criterion of the choice, per aggregation over output sentences; thin "
        "lines: each benchmark; star: the chosen cell; cross (where drawn): the chosen cell with each output sentence "
        "scored against only the chunks a lexical pre-ranker ranks highest, as many as the tuning chose; grey squares "
        "(right axis, log): the model pairs each chunk size costs. No reported benchmark is among them."
    ),
    "screeneval_reliability": (
        "Reliability diagrams on the 614 ScreenEval summary sentences: per equal-width score bin, the share of "
        "sentences labelled consistent (bar), the mean score (tick; where a calibrated bar would end) and the count "
        "(above). Only metrics whose scores lie in [0, 1] are shown."
    ),
}

_IOU = f"the threshold set by {_param('qasem.evaluate.iou_threshold')}"

# Metaeval outputs the paper does not show (results/metaeval/qasem_parser/*.csv): report captions only.
QASEM_PARSER_SCORES = (
    "factlab's own QASem parser (MiniLM encoder, predicate-conditioned B/I/O argument tagger, question-template "
    "classifier; trained on QANom train and dev + QA-SRL GS dev) on the two held-out test sets, given the gold "
    "predicates. Unlabelled argument detection (UA): a predicted answer span matches a gold argument of the same "
    f"predicate when their token IOU is $\\geq$ {_IOU}, one-to-one per predicate; precision, recall and F1 are "
    f"fractions (0-1), not percentages. {_texttt('labeled_f1')} (LA) also requires the question's semantic role "
    "(He et al. 2015: R0/R1/R2[prep] from wh-word, slots and voice, or the adjunct wh-word) to match. "
    f"{_texttt('n_gold')} and {_texttt('n_pred')} count distinct argument spans. The original QASem parser "
    "(T5-small) reports UA-F1 68.6 (QA-SRL GS) and 59.2 (QANom)."
)

QASEM_PARSER_COVERAGE = (
    "Coverage of the QASemConsistency gold QAs by factlab's QASem parser, per task: the parser runs on each "
    "response sentence with its own predicate detection and the rule-based copular QAs; a gold QA is covered when "
    "the parser produced, for the same predicate token, an answer span matched to the gold answer at token IOU "
    f"$\\geq$ {_IOU} (the same one-to-one matching as the parser scores). {_texttt('predicate_recall')} is the "
    "share of gold predicates the parser found."
)


def _report(caption: str, note: str = "") -> str:
    """A report caption: the paper's wording, then (a paragraph of its own) what only the report says."""
    return f"{caption}\n\n{note}" if note else caption


_FRANK_VARIANT_CHOICES = "; ".join(f"{_texttt(name)}: {text}" for name, text in FRANK_VARIANTS.items())
_METAEVAL = "results/metaeval"

# Snakemake report captions by stem (workflow/report/<stem>.rst, `report(..., caption="../report/<stem>.rst")`),
# in the captions' LaTeX flavour; each file is to_rst of its entry. Paper tables: `<name>_table` captions
# paper/tables/<name>.md; figures: `<stem>` captions paper/figures/<stem>.png.
REPORT_CAPTIONS: dict[str, str] = {
    "datasets_table": DATASETS,
    "training_mixture_table": _aligner_mixture(f"run of n words (n: {_param('aligner.mixture.leakage_ngram')})"),
    "true_detection_table": TRUE_DETECTION,
    "detection_table": DETECTION,
    "leaderboard_table": _report(
        LEADERBOARD,
        f"Confidence level: {_param('metaeval.confidence')}. Rows with the paired test's name and the adjusted "
        f"p-values unrounded: {_texttt(f'{_METAEVAL}/leaderboard/leaderboard.csv')}; each scorer's mean AUC over the "
        f"benchmarks it scored: {_texttt('metrics.json')} beside it.",
    ),
    "decisions_table": _report(
        DECISIONS,
        f"Confidence level: {_param('metaeval.confidence')}. The threshold, band and token threshold: "
        f"{_texttt('results/checker/model/checker.json')}, repeated in {_texttt(f'{_METAEVAL}/decisions/metrics.json')} "
        f"beside the counts and intervals of {_texttt('decisions.csv')}.",
    ),
    "calibration_gain_table": _report(
        CALIBRATION_GAIN,
        f"Examples per draw: {_param('metaeval.calibration_gain.sample')}; draws: "
        f"{_param('metaeval.calibration_gain.draws')}; seed: {_param('metaeval.seed')}. Unrounded, with the thresholds "
        f"and the outputs left unscored: {_texttt(f'{_METAEVAL}/calibration_gain/calibration_gain.csv')}.",
    ),
    "retrieval_table": _retrieval(
        f"groups per step: {_param('score.scale.retrieval.branches')}; "
        f"group premise: {_param('score.scale.retrieval.group_premise')}"
    ),
    "frank_scorers_table": FRANK_SCORERS,
    "summeval_scorers_table": SUMMEVAL_SCORERS,
    "localisation_table": LOCALISATION,
    "error_types_table": ERROR_TYPES,
    "correction_table": CORRECTION,
    "explanations_table": EXPLANATIONS,
    "qa_decomposition_table": _report(
        QA_DECOMPOSITION,
        f"Model, aggregation and threshold: {_param('score.qasem_consistency')}. Tables: "
        f"{_texttt(f'{_METAEVAL}/qa_decomposition/response_detection.csv')}, "
        f"{_texttt(f'{_METAEVAL}/qa_decomposition/qa_detection.csv')}.",
    ),
    "qa_detection_table": _report(
        QA_DETECTION,
        f"Per task, split and scorer, with AUC intervals: {_texttt(f'{_METAEVAL}/qasem_consistency/qa_detection.csv')}; "
        f"published values: {_texttt('qa_detection_published.csv')} beside it.",
    ),
    "scoring_throughput_table": SCORING_THROUGHPUT,
    "pipeline_cost_table": _pipeline_cost(
        f"The scoring engine's pairs per second against AlignScore's reference loop: "
        f"{_texttt('results/benchmarks/scoring_throughput.json')}."
    ),
    "frank_baselines_table": _frank_baselines(
        f"the variant set by {_param('metaeval.frank.partial_variant')}; {_FRANK_VARIANT_CHOICES}"
    ),
    "true_published_table": _report(
        _true_published(f"equal-width bins (how many: {_param('metaeval.ece_bins')})"),
        f"Per-set values: {_texttt(f'{_METAEVAL}/true_published/detection.csv')}; comparison with the published "
        f"AUCs: {_texttt('published_comparison.csv')} beside it.",
    ),
    "qasem_consistency_table": QASEM_CONSISTENCY,
    "agreement_table": _report(
        AGREEMENT,
        "XSumFaith here is the canonical benchmark: pairs without a recoverable article are not in it (see "
        f"{_texttt('results/data/reports/xsumfaith.json')}).",
    ),
    "qasem_parser_table": _report(
        _qasem_parser(_IOU),
        "Test sets: QA-SRL GS (verbal predicates) and QANom (event nouns); predicate detection is verbal on GS and "
        "nominal on QANom's candidate nouns; the published parser is Klein et al. (2022). Fractions (0-1).",
    ),
    "qasem_parser_scores": QASEM_PARSER_SCORES,
    "qasem_parser_coverage": QASEM_PARSER_COVERAGE,
    "frank_williams": _report(
        FIGURES["frank_williams"],
        "Williams (1959) test as in Graham and Baldwin (2014), on FRANK's residualised scores (its mm-correlation "
        f"mode), on the summaries where both metrics have a score. p-value: the variant set by "
        f"{_param('metaeval.frank.williams_variant')} (FRANK's paper uses the one-sided p, half the two-sided one).",
    ),
    "frank_metric_matrix": _report(
        FIGURES["frank_metric_matrix"],
        "Metrics are ordered by their all-data partial correlation with human Factuality.",
    ),
    "frank_ablation": _report(
        FIGURES["frank_ablation"],
        f"The categories are FRANK's {_texttt('Flip_')} columns. Partial-correlation variant: "
        f"{_param('metaeval.frank.partial_variant')} (column {_texttt('variant')} of {_texttt('ablation.csv')}).",
    ),
    "true_reliability": _report(
        FIGURES["true_reliability"],
        f"Bins: {_param('metaeval.reliability_plot_bins')}; validation benchmarks: "
        f"{_param('metaeval.detection.validation_benchmarks')}. Table: {_texttt(f'{_METAEVAL}/true/reliability.csv')}; "
        f"ECE before and after calibration: {_texttt(f'{_METAEVAL}/true/auc.csv')} (ece, ece_isotonic).",
    ),
    "detection_reliability": _report(
        FIGURES["detection_reliability"],
        f"Bins: {_param('metaeval.reliability_plot_bins')}; validation benchmarks: "
        f"{_param('metaeval.detection.validation_benchmarks')}. Table: "
        f"{_texttt(f'{_METAEVAL}/detection/reliability.csv')}; ECE before and after calibration: "
        f"{_texttt(f'{_METAEVAL}/detection/auc.csv')} (ece, ece_isotonic).",
    ),
    "frank_scorers_williams": _report(
        FIGURES["frank_scorers_williams"],
        f"p-value: the variant set by {_param('metaeval.frank.williams_variant')}; compared metrics: "
        f"{_param('metaeval.frank.compare_scorers_with')}. Table: {_texttt(f'{_METAEVAL}/frank_scorers/williams.csv')}.",
    ),
    "frank_scorers_matrix": _report(
        FIGURES["frank_scorers_matrix"],
        "Ordered by all-data partial correlation with human Factuality.",
    ),
    "frank_scorers_ablation": _report(
        FIGURES["frank_scorers_ablation"],
        f"Partial-correlation variant: {_param('metaeval.frank.partial_variant')}; compared metrics: "
        f"{_param('metaeval.frank.compare_scorers_with')}. Table: "
        f"{_texttt(f'{_METAEVAL}/frank_scorers/ablation.csv')} (every subset).",
    ),
    "screeneval_chunk_size": _report(
        FIGURES["screeneval_chunk_size"],
        f"SCALE's files: {_texttt('scale_large_<size>_results.json')} ({_texttt('experiments/chunk_size')}). The "
        f"AUCs equal those SCALE's {_texttt('chunk_size_graph.ipynb')} printed "
        f"({_texttt(f'{_METAEVAL}/screeneval_published/published_comparison.csv')}).",
    ),
    "alignscore_tuning": _report(
        FIGURES["alignscore_tuning"],
        f"Grid and validation benchmarks: {_param('score.alignscore.tuning')}. Cells: "
        f"{_texttt('results/score/alignscore_tuning.csv')}; the choice: {_texttt('results/score/alignscore_choice.json')}.",
    ),
    "screeneval_reliability": _report(
        FIGURES["screeneval_reliability"],
        f"Bins: {_param('metaeval.reliability_plot_bins')}. Table: "
        f"{_texttt(f'{_METAEVAL}/screeneval_published/reliability.csv')}.",
    ),
}


# ---------------------------------------------------------------------------------------------- to_rst

_MATH_SYMBOLS = {
    "times": "×",
    "cdot": "·",
    "pm": "±",
    "geq": "≥",
    "ge": "≥",
    "leq": "≤",
    "le": "≤",
    "neq": "≠",
    "approx": "≈",
    "sim": "~",
    "infty": "∞",
    "to": "→",
    "rightarrow": "→",
    "ldots": "…",
    "dots": "…",
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "Delta": "Δ",
    "epsilon": "ε",
    "kappa": "κ",
    "lambda": "λ",
    "mu": "μ",
    "rho": "ρ",
    "sigma": "σ",
    "tau": "τ",
    "chi": "χ",
}
_SUBSCRIPT = str.maketrans("0123456789+-=()", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎")
_SUPERSCRIPT = str.maketrans("0123456789+-=()", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾")
_TEXT_ESCAPES = {"%": "%", "_": "_", "&": "&", "#": "#", "$": "$", "{": "{", "}": "}", " ": " ", ",": " "}
_MARKUP = {"texttt": "``", "emph": "*", "textit": "*", "textbf": "**"}
# A LaTeX caption as pieces: math, a command with a (brace-free) argument, an escaped character, a command.
_TOKEN = re.compile(
    r"(?<!\\)\$(?P<math>.+?)(?<!\\)\$"
    r"|\\(?P<command>[A-Za-z]+)\{(?P<argument>[^{}]*)\}"
    r"|\\(?P<escaped>[%_&#${} ,])"
    r"|\\(?P<symbol>[A-Za-z]+)"
)


def _script(body: str, table: dict[int, str], mark: str) -> str:
    body = body.strip()
    converted = body.translate(table)
    if all(char not in converted for char in body if char.isalnum()) or body == "":
        return converted
    return mark + body  # no Unicode form for letters: r_{ij} -> r_ij


def _math(content: str) -> str:
    text = re.sub(r"\\([A-Za-z]+)", lambda m: _MATH_SYMBOLS.get(m.group(1), m.group(1)), content)
    text = re.sub(r"\\[,;: !]", " ", text)
    text = re.sub(r"_\{([^{}]*)\}|_(\S)", lambda m: _script(m.group(1) or m.group(2), _SUBSCRIPT, "_"), text)
    text = re.sub(r"\^\{([^{}]*)\}|\^(\S)", lambda m: _script(m.group(1) or m.group(2), _SUPERSCRIPT, "^"), text)
    return text.replace("{", "").replace("}", "")


def _escape_rst(text: str) -> str:
    """Plain text as reStructuredText that shows it as is: no emphasis, literal, reference or substitution."""
    text = text.replace("\\", "\\\\")
    text = re.sub(r"([*`|])", r"\\\1", text)
    return re.sub(r"_(?=\W|$)", r"\\_", text)  # word_ would be a hyperlink reference


def _plain(text: str) -> str:
    """LaTeX text-mode conventions outside commands: ~ is a space, ``quotes'' are typographic."""
    return text.replace("~", " ").replace("``", "“").replace("''", "”")


def _join(pieces: list[tuple[str, str]]) -> str:
    """Concatenate (kind, text) pieces: "text" (plain, escaped here, run by run), "rst" (converted already) and
    "markup" (inline markup, set apart by an escaped space from a neighbouring letter or digit: reStructuredText
    only recognises markup between spaces or punctuation)."""
    merged: list[tuple[str, str]] = []
    for kind, text in pieces:
        if kind == "text" and merged and merged[-1][0] == "text":
            merged[-1] = ("text", merged[-1][1] + text)
        elif text:
            merged.append((kind, text))
    out = ""
    for index, (kind, text) in enumerate(merged):
        text = _escape_rst(text) if kind == "text" else text
        if kind == "markup" and out[-1:].isalnum():
            out += "\\ "
        out += text
        following = merged[index + 1][1] if index + 1 < len(merged) else ""
        if kind == "markup" and following[:1].isalnum():
            out += "\\ "
    return out


def _paragraph_to_rst(latex: str) -> str:
    pieces: list[tuple[str, str]] = []
    position = 0
    for match in _TOKEN.finditer(latex):
        pieces.append(("text", _plain(latex[position : match.start()])))
        position = match.end()
        if match.group("math") is not None:
            pieces.append(("text", _math(match.group("math"))))
        elif match.group("command") is not None:
            command, argument = match.group("command"), match.group("argument")
            marker = _MARKUP.get(command)
            if marker == "``":
                pieces.append(("markup", "``" + re.sub(r"\\(.)", r"\1", argument) + "``"))
            elif marker is not None:
                pieces.append(("markup", f"{marker}{_paragraph_to_rst(argument)}{marker}"))
            else:  # any other command: its argument as text
                pieces.append(("rst", _paragraph_to_rst(argument)))
        elif match.group("escaped") is not None:
            pieces.append(("text", _TEXT_ESCAPES[match.group("escaped")]))
        else:
            symbol = match.group("symbol")
            pieces.append(("text", _MATH_SYMBOLS.get(symbol, symbol)))
    pieces.append(("text", _plain(latex[position:])))
    return _join(pieces)


def to_rst(latex_caption: str) -> str:
    """A caption in the captions' LaTeX flavour as reStructuredText: symbols and $math$ as Unicode (×, κ, ≥,
    r₂₃), escapes (\\%, \\_) as their characters, \\texttt as ``literal``, \\emph/\\textit as *emphasis*,
    \\textbf as **strong**; characters reStructuredText would read as markup are escaped. Blank lines separate
    paragraphs; whitespace inside a paragraph becomes single spaces."""
    paragraphs = [" ".join(part.split()) for part in re.split(r"\n\s*\n", latex_caption.strip())]
    return "\n\n".join(_paragraph_to_rst(paragraph) for paragraph in paragraphs if paragraph)


# ---------------------------------------------------------------------------------------------- report files

REPORT_DIR = Path("workflow/report")
WIDTH = 110


def report_rst(stem: str) -> str:
    """The text of workflow/report/<stem>.rst: to_rst of REPORT_CAPTIONS[stem], wrapped at WIDTH columns."""
    paragraphs = to_rst(REPORT_CAPTIONS[stem]).split("\n\n")
    wrapped = (textwrap.fill(paragraph, width=WIDTH, break_long_words=False, break_on_hyphens=False) for paragraph in paragraphs)
    return "\n\n".join(wrapped) + "\n"


def report_files() -> dict[str, str]:
    """File name (<stem>.rst) -> text, for every stem of REPORT_CAPTIONS."""
    return {f"{stem}.rst": report_rst(stem) for stem in REPORT_CAPTIONS}


def stale_files(report_dir: Path = REPORT_DIR) -> list[Path]:
    """The .rst files of report_dir that differ from what REPORT_CAPTIONS generates, are missing, or have no
    stem in REPORT_CAPTIONS (a caption written by hand)."""
    expected = report_files()
    stale = [
        report_dir / name
        for name, text in expected.items()
        if not (report_dir / name).is_file() or (report_dir / name).read_text() != text
    ]
    stale += [path for path in sorted(report_dir.glob("*.rst")) if path.name not in expected]
    return sorted(stale)


def write_report_files(report_dir: Path = REPORT_DIR) -> list[Path]:
    """(Re)write report_dir/<stem>.rst for every stem; returns the files whose text changed."""
    report_dir.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, text in report_files().items():
        path = report_dir / name
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate the Snakemake report captions (workflow/report/*.rst).")
    parser.add_argument("--dir", type=Path, default=REPORT_DIR, help=f"where the .rst files live (default: {REPORT_DIR})")
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 naming the stale files")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files(args.dir)
        for path in stale:
            if path.stem not in REPORT_CAPTIONS:
                reason = "has no stem in REPORT_CAPTIONS (add one or remove the file)"
            else:
                reason = "is stale" if path.exists() else "is missing"
            print(f"{path} {reason}: run `python -m factlab.paper.captions`", file=sys.stderr)
        return 1 if stale else 0
    for path in write_report_files(args.dir):
        print(f"wrote {path}")
    for path in sorted(args.dir.glob("*.rst")):
        if path.stem not in REPORT_CAPTIONS:
            print(f"{path} has no stem in REPORT_CAPTIONS: add one or remove the file", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
