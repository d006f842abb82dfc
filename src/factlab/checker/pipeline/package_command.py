"""`factlab checker package`: the trained aligner, its tuned reading and its model card as one checker folder.

The folder (factlab.checker.folder) is what `factlab check` and `factlab.Checker` load by default, and what a
team shares. Its decision threshold is the one that maximises balanced accuracy on the pooled validation (or dev)
splits of the `--validation-scores` benchmarks (metaeval's `val_tuned` rule; `check.validation_benchmarks`, kinds
of text from news to QA): validation data only, never a reported split. Its correction bar (the support an edit's
sentence must reach) is the lowest at which at most `--max-rewritten-share` of the consistent validation outputs of
each of those benchmarks are rewritten, read with the packaged model (factlab.checker.calibration.correction_bar).
"""

from __future__ import annotations

import argparse
import json
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.checker.folder import CARD_FILE, CARD_TABLE_HEADING, CheckerSettings, card_table_rows
from factlab.commands import json_object
from factlab.errors import FactlabError
from factlab.io import atomic_folder
from factlab.metaeval.variants import LOCALISER_SUFFIX, TOKEN_SUFFIX

if TYPE_CHECKING:
    import pandas as pd

# Licences of the mirrored corpora the training mixture may draw on (their upstream terms: docs/data.md).
LICENCES = {
    "nli_docnli_binary": "BSD-3 (DocNLI: MNLI and FEVER-NLI pairs)",
    "nli_anli_v1.0_devtest": "CC BY-NC 4.0",
    "nli_sick2014": "CC BY-NC-SA 3.0",
    "nli_rte_resplit": "GLUE terms",
    "factcg": "MIT (repository); LLM-generated data",
    "halueval": "MIT",
    "climate_fever": "see upstream (no licence file)",
    "qanom": "MIT",
    "qasrl_gs": "MIT",
}
ALIGNER_FILES = ("model.safetensors", "aligner.json", "encoder")
# Fewer training pairs than this make a toy checker: the smoke configuration's mixture has a few hundred pairs (it
# exercises every step), the full one tens of thousands (params.yaml aligner.mixture).
MIN_TRAINING_PAIRS = 5000


def register(commands: Any) -> None:
    package = commands.add_parser("package", help="the checker folder: aligner weights, checker.json, model card")
    package.add_argument("--aligner", required=True, help="results/models/aligner")
    package.add_argument("--choice", required=True, help="results/score/alignscore_choice.json")
    package.add_argument("--validation-scores", nargs="*", default=[], help="results/score/<benchmark>/alignscore.parquet")
    package.add_argument("--validation-data", nargs="*", default=[], help="results/data/<benchmark>.parquet, same order")
    package.add_argument("--mixture-report", required=True)
    package.add_argument("--leakage", required=True)
    package.add_argument("--settings", type=json_object, required=True, help="JSON: the pipeline's reading settings")
    package.add_argument(
        "--localisation-report",
        default=None,
        help="results/checker/token_reading.json (factlab metaeval token-reading) or the localisation analysis's "
        "report.json: the token localiser's weights and validation-tuned threshold",
    )
    package.add_argument(
        "--uncertain-precision",
        type=float,
        default=None,
        help="the uncertain band: where, on the validation pairs, neither verdict reaches this precision (none without)",
    )
    package.add_argument(
        "--graph",
        default=None,
        help="results/models/aligner/model.onnx: the graph AlignScore's scores were read with (OpenVINO), copied in",
    )
    package.add_argument(
        "--max-rewritten-share",
        type=float,
        default=None,
        help="the share of each benchmark's consistent validation outputs the correction may rewrite (no bar without)",
    )
    package.add_argument("--out-dir", required=True)
    package.set_defaults(func=run_package)


VALIDATION_SPLITS = ("validation", "dev")  # a benchmark's own validation split, or its upstream dev split


def validation_rows(data: pd.DataFrame) -> pd.DataFrame:
    """A benchmark's validation (or dev) rows: all rows of a table without a split column."""
    return data[data["split"].isin(VALIDATION_SPLITS)] if "split" in data.columns else data


def read_validation(scores: list[str], data: list[str]) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """Each `--validation-data` benchmark's validation (or dev) rows and its `--validation-scores` AlignScore table,
    by name, each file read once: the threshold, the uncertain band and the correction bar are all chosen on them."""
    import pandas as pd

    if len(scores) != len(data):
        raise FactlabError(f"--validation-scores gives {len(scores)} files but --validation-data {len(data)}")
    tables = {}
    for score_path, data_path in zip(scores, data, strict=True):
        name = Path(data_path).stem
        if Path(score_path).parent.name != name:
            raise FactlabError(f"{score_path}: not the scores of {name} (same order as --validation-data)")
        tables[name] = (validation_rows(pd.read_parquet(data_path)), pd.read_parquet(score_path))
    return tables


def pooled_threshold(
    tables: dict[str, tuple[pd.DataFrame, pd.DataFrame]], uncertain_precision: float | None = None
) -> tuple[float | None, dict[str, Any]]:
    """The balanced-accuracy threshold on the pooled validation benchmarks (`read_validation`), and what it was chosen
    on; with `uncertain_precision`, also the uncertain band there (factlab.checker.calibration) and its coverage."""
    from factlab.checker.calibration import uncertain_band, verdicts
    from factlab.metaeval.detection import balanced_accuracy, pooled_validation, validation_threshold

    frames = {
        name: scores[["example_id", "score"]].merge(data.dropna(subset=["label"])[["example_id", "label"]], on="example_id")
        for name, (data, scores) in tables.items()
    }
    threshold = validation_threshold(frames)
    pooled = pooled_validation(frames)
    if threshold is None or pooled is None:
        return None, {"benchmarks": sorted(frames), "pairs": 0}
    labels = pooled["label"].astype(int).to_numpy()
    predicted = (pooled["score"].to_numpy() >= threshold).astype(int)
    chosen_on = {
        "benchmarks": sorted(frames),
        "pairs": len(pooled),
        "consistent_share": round(float(labels.mean()), 4),
        "balanced_accuracy": round(float(balanced_accuracy(labels, predicted)), 4),
    }
    if uncertain_precision is not None:
        band = uncertain_band(labels, pooled["score"].to_numpy(), threshold, uncertain_precision)
        given = verdicts(pooled["score"].to_numpy(), threshold, band)
        chosen_on["uncertain_band"] = list(band)  # unrounded: a bound just above 1 means "never consistent"
        chosen_on["uncertain_precision"] = uncertain_precision
        chosen_on["coverage"] = round(float((given >= 0).mean()), 4)
    return threshold, chosen_on


# The gold whose validation part tunes the token threshold, in order of preference: WiCE's dev split is a validation
# split of its own; XSumFaith's is a seeded share of its documents (metaeval.localisation.val_fraction).
TOKEN_THRESHOLD_GOLD = ("wice_tokens", "xsumfaith_spans")
# The localisation analysis's readings of AlignScore's token detail, preferred first: through the token localiser
# fit on validation tokens (factlab.models.token_localiser), then the head alone.
LOCALISED_SCORER = "alignscore"
TOKEN_READINGS = ((LOCALISER_SUFFIX, "token localiser"), (TOKEN_SUFFIX, "token head"))


@dataclass(frozen=True)
class TokenReading:
    threshold: float
    source: str
    localiser: dict[str, Any] | None = None


def token_reading(report_path: str | None) -> TokenReading:
    """How the checker marks words: P(unsupported) above 1 - the localisation analysis's validation-tuned support
    threshold (a token is flagged iff its support is below it) of the token localiser, with its weights, or of the
    head alone; and where the threshold was tuned."""
    default = TokenReading(CheckerSettings.token_threshold, CheckerSettings.token_threshold_source)
    if report_path is None:
        return default
    report = _read_json(Path(report_path))
    datasets, localisers = report.get("datasets", {}), report.get("localisers", {})
    for suffix, name in TOKEN_READINGS:
        scorer = LOCALISED_SCORER + suffix
        localiser = localisers.get(LOCALISED_SCORER) if suffix == LOCALISER_SUFFIX else None
        if suffix == LOCALISER_SUFFIX and localiser is None:
            continue
        for gold in TOKEN_THRESHOLD_GOLD:
            entry = datasets.get(gold, {})
            tuned = entry.get("scorers", {}).get(scorer, {}).get("thresholds", {}).get("val_tuned")
            if tuned is not None:
                split = entry.get("split", {})
                where = split.get("validation") if split.get("kind") == "upstream" else "validation documents"
                source = f"maximises token F1 of the {name} on {gold} ({where}), flagged iff support < {round(float(tuned), 6)}"
                return TokenReading(round(1.0 - float(tuned), 6), source, localiser)
    return default


def checker_settings(args: argparse.Namespace, tables: dict[str, tuple[pd.DataFrame, pd.DataFrame]]) -> CheckerSettings:
    """The folder's card from the tuning's choice, the token reading and the pooled validation `tables`
    (`read_validation`), before its correction bar."""
    from factlab.score.tuning import read_choice

    choice = read_choice(args.choice, args.settings.get("chunk_policy", CheckerSettings.chunk_policy))
    tokens = token_reading(args.localisation_report)
    threshold, chosen_on = pooled_threshold(tables, args.uncertain_precision)
    source = (
        f"maximises balanced accuracy on {chosen_on['pairs']} validation pairs of {', '.join(chosen_on['benchmarks'])}"
        if threshold is not None
        else "default 0.5: no validation benchmark with both labels was scored"
    )
    try:
        return CheckerSettings(
            words_per_chunk=int(choice["words_per_chunk"]),
            aggregation=str(choice["aggregation"]),
            support_head=str(choice["support_head"]),
            top_chunks=int(choice.get("top_chunks", 0)),
            threshold=round(float(threshold), 6) if threshold is not None else 0.5,
            threshold_source=source,
            token_threshold=tokens.threshold,
            token_threshold_source=tokens.source,
            token_localiser=tokens.localiser,
            uncertain_band=chosen_on.get("uncertain_band"),
            validation={
                "threshold": chosen_on,
                "tuning_mean_roc_auc": choice.get("chosen_mean_roc_auc", choice.get("mean_roc_auc")),
                "tuning_exhaustive_mean_roc_auc": choice.get("exhaustive_mean_roc_auc", choice.get("mean_roc_auc")),
                "tuning_benchmarks": choice.get("benchmarks", []),
            },
            **args.settings,
        )
    except (KeyError, TypeError) as error:
        raise FactlabError(f"{args.choice} or --settings: {error}") from error


def with_correction_bar(
    settings: CheckerSettings,
    folder: Path,
    tables: dict[str, tuple[pd.DataFrame, pd.DataFrame]],
    max_rewritten_share: float | None,
) -> CheckerSettings:
    """`settings` with the correction bar chosen on the consistent validation outputs of each benchmark of `tables`
    (`read_validation`), read by the checker in `folder` (its weights and the card of `settings`) as `factlab check`
    reads them; unchanged without `max_rewritten_share`."""
    import math

    from factlab.checker.api import Checker
    from factlab.checker.calibration import correction_bar

    if max_rewritten_share is None or not tables:
        return settings
    checker = Checker(model=folder)
    kinds, counts = {}, {}
    for name, (data, scores) in tables.items():
        consistent = data[data["label"] == 1]
        rows, details, outputs, sources = checker.table_rows(consistent, scores)
        supports = checker.rewrite_supports(rows, details, outputs, sources)
        kinds[name] = (list(supports.values()), len(rows))
        counts[name] = {"consistent_outputs": len(rows), "rewritable": len(supports)}
    bar, each = correction_bar(kinds, settings.threshold, max_rewritten_share)
    bar = math.ceil(bar * 1e6) / 1e6  # rounded up: the recorded bar rewrites no more than the chosen one
    source = (  # `each` holds the benchmarks with consistent validation outputs
        f"at most {max_rewritten_share:.0%} of the consistent validation outputs of each of {', '.join(each)} rewritten"
        if each
        else "the decision threshold: no consistent validation output to choose a bar on"
    )
    chosen_on = {
        "max_share": max_rewritten_share,
        "benchmarks": {name: {**counts[name], "bar": round(each[name], 6)} for name in each},
    }
    return replace(
        settings,
        correction_bar=bar,
        correction_bar_source=source,
        validation={**settings.validation, "correction": chosen_on},
    )


def toy_reason(mixture: dict[str, Any], metrics: dict[str, Any]) -> str | None:
    """Why the aligner makes a toy checker (None: it does not): trained on fewer than `MIN_TRAINING_PAIRS` pairs, as
    counted by the mixture report (else the training metrics). Without a count, it is not called a toy."""
    pairs = mixture.get("train_pairs", metrics.get("train_pairs"))
    if pairs is None or int(pairs) >= MIN_TRAINING_PAIRS:
        return None
    return f"trained on {int(pairs):,} pairs, fewer than {MIN_TRAINING_PAIRS:,}: a smoke-sized mixture"


def run_package(args: argparse.Namespace) -> None:
    aligner = Path(args.aligner)
    missing = [name for name in ALIGNER_FILES if not (aligner / name).exists()]
    if missing:
        raise FactlabError(f"{aligner} is not a trained aligner: it lacks {missing}")
    metrics, mixture = _read_json(aligner / "metrics.json"), _read_json(Path(args.mixture_report))
    toy = toy_reason(mixture, metrics)
    tables = read_validation(args.validation_scores, args.validation_data)
    settings = replace(checker_settings(args, tables), toy=toy is not None, toy_reason=toy)
    with atomic_folder(args.out_dir) as staging:
        for name in ALIGNER_FILES:
            source = aligner / name
            (shutil.copytree if source.is_dir() else shutil.copy2)(source, staging / name)
        if args.graph is not None:
            from factlab.models.openvino_aligner import ONNX_FILE

            shutil.copy2(args.graph, staging / ONNX_FILE)
        # the card without its bar first: the bar is read by a Checker loading this folder, its model and card
        (staging / CARD_FILE).write_text(json.dumps(settings.as_json(), indent=2, sort_keys=True) + "\n")
        settings = with_correction_bar(settings, staging, tables, args.max_rewritten_share)
        (staging / CARD_FILE).write_text(json.dumps(settings.as_json(), indent=2, sort_keys=True) + "\n")
        card = model_card(
            settings,
            json.loads((aligner / "aligner.json").read_text()),
            metrics,
            mixture,
            _read_json(Path(args.leakage)),
            graph=args.graph is not None,
        )
        (staging / "README.md").write_text(card)


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.is_file() else {}


def _rows(values: dict[str, Any]) -> list[str]:
    """A report's scalar entries as table rows; timings left out, so the card is the same in every rebuild."""
    return [
        f"| {key} | {value} |"
        for key, value in values.items()
        if not isinstance(value, (dict, list)) and not any(word in key for word in ("seconds", "per_s", "elapsed"))
    ]


def uncertain_lines(settings: CheckerSettings) -> list[str]:
    """The card's sentence on the uncertain band (none without one)."""
    chosen_on = settings.validation.get("threshold", {})
    if settings.uncertain_band is None:
        return []
    low, high = settings.uncertain_band
    return [
        f"A score in [{low:.4g}, {high:.4g}) gets the verdict `uncertain` (`consistent` null, nothing rewritten): on the "
        f"validation pairs, neither verdict reaches {chosen_on.get('uncertain_precision', 0):.0%} precision there; "
        f"{chosen_on.get('coverage', 0):.1%} of them get a verdict. Calibrate on your own labelled pairs with "
        "`factlab calibrate`."
    ]


def model_card(
    settings: CheckerSettings,
    aligner: dict[str, Any],
    metrics: dict[str, Any],
    mixture: dict[str, Any],
    leakage: dict[str, Any],
    *,
    graph: bool = False,
) -> str:
    """The folder's README.md: what the model is, how to use it, what it was trained and chosen on, its limits."""
    train = aligner.get("settings", {})
    warning = [f"**A toy checker ({settings.toy_reason}): its scores mean nothing.**", ""] if settings.toy else []
    lines = [
        "# factlab checker",
        "",
        *warning,
        "A factual-consistency checker: given a source text and an output (a summary, an answer, a claim), it scores",
        "how well the source supports each output sentence and the output as a whole (AlignScore's method: the",
        "source cut into chunks, each output sentence scored against every chunk, its best chunk kept).",
        f"Backbone: `{train.get('backbone', 'minilm')}`; AlignScore's three heads (3-way, binary, regression).",
        "",
        "## Use",
        "",
        "```bash",
        "factlab check pairs.jsonl -o scores.jsonl --model <this folder>",
        "```",
        "",
        "```python",
        "import factlab",
        'checker = factlab.Checker(model="<this folder>")',
        "frame = checker.check(sources, outputs)",
        "```",
        "",
        *(
            [
                "On a CPU the checker runs `model.onnx` (the same network as an ONNX graph) with OpenVINO, without",
                "importing torch, as the pipeline's AlignScore scoring did; `--runtime torch` reads `model.safetensors`.",
                "",
            ]
            if graph
            else []
        ),
        f"{CARD_TABLE_HEADING} (`checker.json`)",
        "",
        "| setting | value |",
        "|---|---|",
        *card_table_rows(settings),
        "",
        f"The threshold: {settings.threshold_source}.",
        *uncertain_lines(settings),
        f"A correction's edit is applied only where its sentence's support then reaches {settings.edit_bar:.4g}: "
        f"{settings.correction_bar_source}.",
        "Chunk size, support head, aggregation and the chunks scored per output sentence (`top_chunks`, the best of a "
        "lexical pre-ranker; 0: every chunk) were chosen by AlignScore's tuning on validation benchmarks "
        f"({', '.join(settings.validation.get('tuning_benchmarks', [])) or 'none'}; macro-mean ROC AUC "
        f"{settings.validation.get('tuning_mean_roc_auc')}, every chunk scored "
        f"{settings.validation.get('tuning_exhaustive_mean_roc_auc')}).",
        "",
        "## Validation metrics (held-out pairs of the training mixture)",
        "",
        "| metric | value |",
        "|---|---|",
        *_rows(metrics),
        "",
        "## Training data",
        "",
        "Real corpora and synthetic errors made from their documents (the mixture report below); no pair shares an",
        f"{leakage.get('ngram', 8)}-word run with any text of factlab's evaluation benchmarks (the leakage check).",
        "",
        "| mixture | value |",
        "|---|---|",
        *_rows(mixture),
        "",
        "| leakage check | value |",
        "|---|---|",
        *_rows(leakage),
        "",
        "Licences of the corpora the mixture draws on (several are non-commercial):",
        "",
        "| dataset | licence |",
        "|---|---|",
        *[f"| {name} | {licence} |" for name, licence in LICENCES.items()],
        "",
        "## Intended use and limits",
        "",
        "- English only: the training data are English; `factlab check` flags other languages (`not_english`).",
        "- Scores rank outputs by support; they are not calibrated probabilities. The threshold is one operating",
        "  point chosen on validation data; choose your own on labelled data of your domain.",
        f"- Each (chunk, sentence) pair is read in at most {train.get('max_length', 512)} word pieces; longer pieces are",
        "  cut and counted.",
        "- It checks support by the source only: a true fact absent from the source scores as unsupported.",
        "",
    ]
    return "\n".join(lines)
