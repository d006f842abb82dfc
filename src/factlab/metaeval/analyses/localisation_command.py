"""`factlab metaeval localisation`: factlab's scorers as token-level localisers of unsupported content.

Inputs: score tables `results/score/<benchmark>/<scorer>.parquet` (per-sentence `support` with
[start, end) offsets in the output, or QASemConsistency's `units`: each QA's score and the character spans
of its predicate and answer in the output) and gold token tables given as `<benchmark>=<path>` (the gold
of the outputs of that benchmark; e.g. `xsumfaith=results/data/xsumfaith_spans.parquet`,
`wice_tokens=results/data/wice_tokens.parquet`), each with `example_id`, `doc_id`, `split`,
`output`, JSON `tokens`, `token_offsets`, `token_labels` (1 = supported) and optionally
`worker_token_labels` (one list per annotator). Each token takes the support of its sentence, or the
lowest of the units covering it (factlab.metaeval.localisation); a scored sentence must be the gold output's
text at its offsets, and so must a unit (a sentence unit its text, a QA its answer, whitespace aside).

Validation and evaluated tokens: a gold table with `dev` and `test` splits (WiCE) tunes on dev and
is evaluated on test; a table with one split (XSumFaith) is split by document, a seeded
`--val-fraction` of its documents tuning and the rest evaluated; the validation documents are
listed in the report. Every policy and both floors are evaluated on the same tokens: those of the
scorer's scored examples of the evaluated part.

tokens.csv: per (gold dataset, scorer) one row per threshold policy (`--policies`), then one per floor
(`FLOORS`): `flag_all` flags every token, `lexical_floor` every token with a word its source lacks
(factlab.metaeval.localisation.lexically_novel; only with `--sources`). Each row: threshold, token precision /
recall / F1 (unsupported = positive) with a document-bootstrap CI of F1, character precision / recall / F1
(factlab.metaeval.localisation.character_prf) with a CI of F1, ROC AUC with its CI (none for flag_all, whose
score is constant; the lexical floor's of its 0/1 flags), token, character and example counts. A table with
per-token support (`tokens`) is read twice: by its sentences as `<scorer>` and by its tokens as `<scorer>_tokens`.
report.json: the splits, thresholds, counts (unscored examples, tokens outside every scored unit) and,
where several annotators marked the outputs, their agreement over tokens (`all` outputs of the gold
table, and `evaluated`: every output of the evaluated part, scored or not, e.g. XSumFaith's Gold summaries).
metrics.json: per scorer and gold dataset, token AUC, token F1 and character F1 per policy and floor
(`dvc metrics show`).
"""

from __future__ import annotations

import argparse
import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import add_bootstrap_arguments, write_report
from factlab.errors import DataError, FactlabError
from factlab.io import write_json, write_text
from factlab.metaeval.arguments import benchmark_arguments, headline_number
from factlab.metaeval.errors import StatisticsError
from factlab.metaeval.variants import LOCALISATION_POLICIES, LOCALISER_SUFFIX, TOKEN_SUFFIX

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from factlab.metaeval.localisation import FlaggedPRF
    from factlab.models.token_localiser import TokenLocaliser, WordFeatures

LOG = logging.getLogger(__name__)
GOLD_COLUMNS = ("example_id", "doc_id", "split", "output", "tokens", "token_offsets", "token_labels")
SCORE_COLUMNS = ("example_id", "score")
# The detail a score table localises with: per-sentence support, or per-unit (QASemConsistency's QAs).
DETAIL_COLUMNS = ("sentences", "units")
# A table may also carry per-token support (the aligner's token head: factlab.score.alignscore): it is evaluated as a
# scorer of its own (TOKEN_SUFFIX), each word piece a unit covering its characters; with the outputs' sources
# (`--sources`), the token detail is also read through a token localiser (factlab.models.token_localiser) fit on the
# validation tokens of every gold table at once (LOCALISER_SUFFIX).
TOKEN_DETAIL = "tokens"
VALIDATION, EVALUATED = "validation", "evaluated"
# The floors every localiser is read beside, on its own evaluated tokens: every token flagged, and the tokens with
# a word the source lacks.
FLAG_ALL, LEXICAL_FLOOR = "flag_all", "lexical_floor"
FLOORS = (FLAG_ALL, LEXICAL_FLOOR)
LEXICALLY_NOVEL = "lexically_novel"  # the token column of the lexical floor's flags
COLUMNS = (
    "dataset",
    "scorer",
    "policy",
    "threshold",
    "n_examples",
    "n_unscored_examples",
    "n_tokens",
    "n_unsupported",
    "base_rate",
    "n_flagged",
    "precision",
    "recall",
    "f1",
    "f1_ci_low",
    "f1_ci_high",
    "n_characters",
    "n_unsupported_characters",
    "n_flagged_characters",
    "char_precision",
    "char_recall",
    "char_f1",
    "char_f1_ci_low",
    "char_f1_ci_high",
    "roc_auc",
    "roc_auc_ci_low",
    "roc_auc_ci_high",
    "n_tokens_outside_units",
)


def register(commands: Any) -> None:
    parser = commands.add_parser("localisation", help="token-level localisation: precision/recall/F1 and AUC over tokens")
    parser.add_argument("--scores", nargs="+", required=True, help="results/score/<benchmark>/<scorer>.parquet")
    parser.add_argument(
        "--gold",
        nargs="+",
        required=True,
        help="<benchmark>=<gold token table>, e.g. xsumfaith=results/data/xsumfaith_spans.parquet",
    )
    parser.add_argument("--policies", nargs="+", required=True, choices=LOCALISATION_POLICIES)
    parser.add_argument("--val-fraction", type=float, required=True, help="share of documents tuning thresholds (one-split gold)")
    add_bootstrap_arguments(parser)
    parser.add_argument("--out", required=True, help="CSV (tokens.csv)")
    parser.add_argument("--report", required=True, help="JSON (report.json)")
    parser.add_argument("--out-metrics", required=True, help="metrics.json: the headline numbers per scorer (dvc metrics)")
    parser.add_argument(
        "--sources",
        nargs="*",
        default=[],
        help="<benchmark>=<table with example_id, source>: the sources the token localiser reads (its benchmark's data table)",
    )
    parser.add_argument(
        "--localiser-out",
        help="JSON (token_localiser.json): per scorer with token detail, the localiser's weights fit on validation tokens",
    )
    parser.set_defaults(func=run_localisation)


@dataclass(frozen=True)
class GoldExample:
    example_id: str
    doc_id: str
    split: str
    output: str
    offsets: np.ndarray  # (tokens, 2)
    unsupported: np.ndarray  # 1 = unsupported token (majority where several annotators)
    workers: np.ndarray | None  # (annotators, tokens) canonical labels, 1 = supported


def _json_list(value: Any, *, file: str, record: str, field: str) -> list:
    try:
        parsed = json.loads(value) if isinstance(value, str) else None
    except json.JSONDecodeError as error:
        raise DataError(f"not JSON: {error.msg}", file=file, record=record, field=field) from error
    if not isinstance(parsed, list):
        raise DataError("not a JSON list", file=file, record=record, field=field)
    return parsed


def _zero_one(values: list, n: int, *, file: str, record: str, field: str) -> np.ndarray:
    import numpy as np

    if len(values) != n or not all(v in (0, 1) and not isinstance(v, float | bool) for v in values):
        raise DataError(f"not a list of {n} labels 0/1", file=file, record=record, field=field)
    return np.asarray(values, dtype=np.int64)


def gold_example(row: dict[str, Any], *, file: str) -> GoldExample:
    """One gold row checked: tokens are the output's text at their offsets, in order and disjoint (so that the
    character metric counts each character once), labels 0/1, one per token."""
    import numpy as np

    record = str(row["example_id"])
    output = row["output"]
    if not isinstance(output, str):
        raise DataError("output is not a string", file=file, record=record, field="output")
    tokens = _json_list(row["tokens"], file=file, record=record, field="tokens")
    offsets = _json_list(row["token_offsets"], file=file, record=record, field="token_offsets")
    if not tokens or len(offsets) != len(tokens):
        raise DataError(f"{len(offsets)} offsets for {len(tokens)} tokens", file=file, record=record, field="token_offsets")
    previous_end = 0
    for index, (token, span) in enumerate(zip(tokens, offsets, strict=True)):
        valid = isinstance(span, list) and len(span) == 2 and all(isinstance(v, int) for v in span)
        if not valid or not 0 <= span[0] < span[1] <= len(output) or output[span[0] : span[1]] != token:
            raise DataError(
                f"token {index} {token!r} is not the output at {span}", file=file, record=record, field="token_offsets"
            )
        if span[0] < previous_end:
            raise DataError(
                f"token {index} {token!r} at {span} overlaps or precedes the token before it",
                file=file,
                record=record,
                field="token_offsets",
            )
        previous_end = span[1]
    labels = _zero_one(
        _json_list(row["token_labels"], file=file, record=record, field="token_labels"),
        len(tokens),
        file=file,
        record=record,
        field="token_labels",
    )
    workers = None
    if "worker_token_labels" in row and row["worker_token_labels"] is not None:
        per_worker = _json_list(row["worker_token_labels"], file=file, record=record, field="worker_token_labels")
        if not per_worker or not all(isinstance(values, list) for values in per_worker):
            raise DataError("not a list of label lists", file=file, record=record, field="worker_token_labels")
        workers = np.stack(
            [_zero_one(values, len(tokens), file=file, record=record, field="worker_token_labels") for values in per_worker]
        )
    return GoldExample(
        example_id=record,
        doc_id=str(row["doc_id"]),
        split=str(row["split"]),
        output=output,
        offsets=np.asarray(offsets, dtype=np.int64),
        unsupported=1 - labels,
        workers=workers,
    )


def read_example_table(path: str, columns: tuple[str, ...]) -> pd.DataFrame:
    """A parquet table with `columns`, one row per example_id (else a DataError naming file, record, field)."""
    import pandas as pd

    frame = pd.read_parquet(path)
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise DataError(f"missing column(s) {missing}", file=path, field=missing[0])
    duplicated = frame["example_id"].duplicated()
    if duplicated.any():
        raise DataError(
            "duplicate example_id", file=path, record=str(frame.loc[duplicated, "example_id"].iloc[0]), field="example_id"
        )
    return frame


def read_gold(path: str) -> dict[str, GoldExample]:
    frame = read_example_table(path, GOLD_COLUMNS)
    return {str(row["example_id"]): gold_example(row, file=path) for row in frame.to_dict("records")}


def split_parts(
    gold: dict[str, GoldExample], *, file: str, val_fraction: float, seed: int
) -> tuple[dict[str, str], dict[str, Any]]:
    """example_id -> "validation" | "evaluated", and the split's description for the report."""
    from factlab.metaeval.localisation import document_split

    splits = sorted({example.split for example in gold.values()})
    if splits == ["dev", "test"]:
        parts = {eid: VALIDATION if example.split == "dev" else EVALUATED for eid, example in gold.items()}
        return parts, {"kind": "upstream", "validation": "dev", "evaluated": "test"}
    if len(splits) != 1:
        raise DataError(f"splits {splits}: expected dev and test, or a single split", file=file, field="split")
    validation = set(document_split([example.doc_id for example in gold.values()], val_fraction, seed))
    parts = {eid: VALIDATION if example.doc_id in validation else EVALUATED for eid, example in gold.items()}
    documents = {example.doc_id for example in gold.values()}
    return parts, {
        "kind": "seeded_documents",
        "split": splits[0],
        "val_fraction": val_fraction,
        "seed": seed,
        "n_validation_documents": len(validation),
        "n_evaluated_documents": len(documents) - len(validation),
        "validation_documents": sorted(validation),
    }


def example_sentences(sentences: Any, *, file: str, record: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(offsets, support, texts) of one scored output's sentences."""
    import numpy as np

    if sentences is None or not all(isinstance(s, dict) for s in sentences):
        raise DataError("not a list of sentence records", file=file, record=record, field="sentences")
    try:
        offsets = np.asarray([[int(s["start"]), int(s["end"])] for s in sentences], dtype=np.int64).reshape(-1, 2)
        support = np.asarray([float(s["support"]) for s in sentences], dtype=float)
        texts = [str(s["sentence"]) for s in sentences]
    except (KeyError, TypeError, ValueError) as error:
        raise DataError(
            f"sentence record lacks start/end/support/sentence ({error})", file=file, record=record, field="sentences"
        ) from error
    return offsets, support, texts


def example_units(units: Any, output: str, *, file: str, record: str) -> tuple[list[np.ndarray], np.ndarray]:
    """(output spans, support) of one scored output's units (its QAs, or its sentences where it has none)."""
    import numpy as np

    if units is None or not all(isinstance(u, dict) for u in units):
        raise DataError("not a list of unit records", file=file, record=record, field="units")
    try:
        spans = [
            np.asarray([[int(start), int(end)] for start, end in u["output_spans"]], dtype=np.int64).reshape(-1, 2) for u in units
        ]
        support = np.asarray([float(u["score"]) for u in units], dtype=float)
    except (KeyError, TypeError, ValueError) as error:
        raise DataError(f"unit record lacks output_spans/score ({error})", file=file, record=record, field="units") from error
    for index, (unit, unit_spans) in enumerate(zip(units, spans, strict=True)):
        if len(unit_spans) and unit_spans.max() > len(output):
            message = f"unit {index}'s spans {unit_spans.tolist()} pass the end of the gold output ({len(output)} characters)"
            raise DataError(message, file=file, record=record, field="units")
        # A unit must be the gold output's text where it says: a sentence its hypothesis, a QA's answer (its second
        # span; the parser's tokens joined by spaces, so compared without whitespace) its answer.
        expected, span = (
            (unit.get("hypothesis"), unit_spans[0] if len(unit_spans) else None)
            if unit.get("unit") == "sentence"
            else (unit.get("answer"), unit_spans[1] if len(unit_spans) > 1 else None)
        )
        if span is not None and "".join(output[span[0] : span[1]].split()) != "".join(str(expected).split()):
            message = f"unit {index} {expected!r} is not the gold output's text at {span.tolist()}"
            raise DataError(message, file=file, record=record, field="units")
    return spans, support


def token_units(pieces: Any, output: str, *, file: str, record: str) -> tuple[list[np.ndarray], np.ndarray]:
    """(output spans, support) of one scored output's word pieces (the token head's detail)."""
    import numpy as np

    if pieces is None or not all(isinstance(p, dict) for p in pieces):
        raise DataError("not a list of token records", file=file, record=record, field=TOKEN_DETAIL)
    try:
        spans = [np.asarray([[int(p["start"]), int(p["end"])]], dtype=np.int64) for p in pieces]
        support = np.asarray([float(p["support"]) for p in pieces], dtype=float)
    except (KeyError, TypeError, ValueError) as error:
        message = f"token record lacks start/end/support ({error})"
        raise DataError(message, file=file, record=record, field=TOKEN_DETAIL) from error
    if spans and max(int(span[0, 1]) for span in spans) > len(output):
        raise DataError("a token passes the end of the gold output", file=file, record=record, field=TOKEN_DETAIL)
    return spans, support


def projected_support(detail: Any, detail_column: str, example: GoldExample, *, file: str, record: str) -> Any:
    """The example's tokens' support from its score detail: per-sentence support or per-unit spans."""
    from factlab.metaeval.localisation import project_sentence_support, project_unit_support

    if detail_column == TOKEN_DETAIL:
        spans, support = token_units(list(detail), example.output, file=file, record=record)
        project = project_unit_support
    elif detail_column == "units":
        spans, support = example_units(list(detail), example.output, file=file, record=record)
        project = project_unit_support
    else:
        offsets, support, texts = example_sentences(list(detail), file=file, record=record)
        for index, ((start, end), text) in enumerate(zip(offsets, texts, strict=True)):
            if example.output[start:end] != text:
                message = f"sentence {index} {text!r} is not the gold output's text at [{start}, {end})"
                raise DataError(message, file=file, record=record, field="sentences")
        spans, project = offsets, project_sentence_support
    try:
        return project(example.offsets, spans, support)
    except StatisticsError as error:
        raise DataError(str(error), file=file, record=record, field=detail_column) from error


def scored_tokens(
    path: str,
    gold: dict[str, GoldExample],
    parts: dict[str, str],
    *,
    scores: pd.DataFrame | None = None,
    detail: str = "",
    lexical: dict[str, np.ndarray] | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """One row per token of each scored gold output: part, doc_id, y_unsupported, support, characters (the token's
    length), and with `lexical` (example_id -> the lexical floor's flags) lexically_novel.

    `detail` names the column to localise with (default: the first of DETAIL_COLUMNS the table has).
    `tokens_outside_units` counts the tokens outside every scored unit: outside every sentence (projected from the
    nearest) or, for a table of units, covered by no unit (support 1)."""
    import numpy as np
    import pandas as pd

    scores = read_example_table(path, SCORE_COLUMNS) if scores is None else scores
    detail_column = detail or next((column for column in DETAIL_COLUMNS if column in scores.columns), None)
    if detail_column is None:
        raise DataError(f"no localising detail: a column of {list(DETAIL_COLUMNS)}", file=path, field=DETAIL_COLUMNS[0])
    frames, counts = [], {"scored": 0, "unscored": 0, "tokens_outside_units": 0}
    by_id = dict(zip(scores["example_id"].astype(str), zip(scores["score"], scores[detail_column], strict=True), strict=True))
    unknown = sorted(set(by_id) - set(gold))
    if unknown:
        raise DataError("scored example is not in the gold table", file=path, record=unknown[0], field="example_id")
    for example_id, example in gold.items():
        score, detail = by_id.get(example_id, (np.nan, None))
        if pd.isna(score) or detail is None or len(detail) == 0:
            counts["unscored"] += 1
            continue
        projected = projected_support(detail, detail_column, example, file=path, record=example_id)
        counts["scored"] += 1
        counts["tokens_outside_units"] += projected.n_outside
        columns = {
            "example_id": example_id,
            "doc_id": example.doc_id,
            "part": parts[example_id],
            "y_unsupported": example.unsupported,
            "support": projected.support,
            "characters": example.offsets[:, 1] - example.offsets[:, 0],
        }
        if lexical is not None:
            if example_id not in lexical:
                raise DataError("no source for the scored output (--sources)", file=path, record=example_id, field="example_id")
            columns[LEXICALLY_NOVEL] = lexical[example_id]
        frames.append(pd.DataFrame(columns))
    columns = ["example_id", "doc_id", "part", "y_unsupported", "support", "characters"]
    columns += [LEXICALLY_NOVEL] if lexical is not None else []
    return (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)), counts


def _interval(
    statistic: Any, *arrays: np.ndarray, groups: np.ndarray, settings: argparse.Namespace, what: str
) -> tuple[float, float]:
    import numpy as np

    from factlab.metaeval.bootstrap import bootstrap_ci

    try:
        ci = bootstrap_ci(
            statistic,
            *arrays,
            groups=groups,
            n_resamples=settings.resamples,
            confidence=settings.confidence,
            rng=np.random.default_rng(settings.seed),
        )
    except StatisticsError as error:
        LOG.warning("%s: no bootstrap interval (%s)", what, error)
        return np.nan, np.nan
    return ci.low, ci.high


def localisation_rows(
    dataset: str, scorer: str, tokens: pd.DataFrame, n_unscored: int, n_outside: int, settings: argparse.Namespace
) -> tuple[list[dict[str, Any]], dict[str, float | None]]:
    """The rows of one (gold dataset, scorer): each policy, then each floor on the same tokens; and the thresholds."""
    import numpy as np

    from factlab.metaeval.localisation import flag_all_baseline, flag_tokens, flagged_prf, policy_threshold

    evaluated = tokens[tokens["part"] == EVALUATED]
    validation = tokens[tokens["part"] == VALIDATION]
    what = f"{scorer} on {dataset}"
    if evaluated.empty:
        LOG.warning("%s: no scored evaluated tokens", what)
        return [], {}
    read = EvaluatedTokens(
        gold=evaluated["y_unsupported"].to_numpy(dtype=np.int64),
        characters=evaluated["characters"].to_numpy(dtype=np.int64),
        groups=evaluated["doc_id"].astype(str).to_numpy(),
        what=what,
        settings=settings,
    )
    base = {
        "dataset": dataset,
        "scorer": scorer,
        "n_examples": int(evaluated["example_id"].nunique()),
        "n_unscored_examples": n_unscored,
        "n_tokens_outside_units": n_outside,
    }
    support = evaluated["support"].to_numpy(dtype=float)
    auc = auc_columns(read, support)
    validation_pair = None
    if not validation.empty:
        validation_pair = (validation["y_unsupported"].to_numpy(dtype=np.int64), validation["support"].to_numpy(dtype=float))
    rows, thresholds = [], {}
    for policy in settings.policies:
        try:
            threshold = policy_threshold(policy, evaluated=(read.gold, support), validation=validation_pair)
        except StatisticsError as error:
            LOG.warning("%s: no %s threshold (%s)", what, policy, error)
            thresholds[policy] = None
            continue
        thresholds[policy] = threshold
        flagged = flag_tokens(support, threshold)
        scores = flagged_prf(read.gold, flagged, read.characters)
        rows.append(base | {"policy": policy, "threshold": threshold} | flag_columns(read, flagged, scores, policy) | auc)
    flag_all = flag_all_baseline(read.gold, read.characters)
    rows.append(base | {"policy": FLAG_ALL} | flag_columns(read, np.ones_like(read.gold), flag_all, FLAG_ALL))
    if LEXICALLY_NOVEL in evaluated.columns:
        novel = evaluated[LEXICALLY_NOVEL].to_numpy(dtype=np.int64)
        scores = flagged_prf(read.gold, novel, read.characters)
        lexical_auc = auc_columns(read, 1.0 - novel, LEXICAL_FLOOR)  # its flags as a 0/1 support score
        rows.append(base | {"policy": LEXICAL_FLOOR} | flag_columns(read, novel, scores, LEXICAL_FLOOR) | lexical_auc)
    else:
        LOG.warning("%s: no lexical floor (no --sources for the gold table)", what)
    return rows, thresholds


@dataclass(frozen=True)
class EvaluatedTokens:
    """What every row of one (gold dataset, scorer) is scored on: the evaluated tokens' gold, their lengths, their
    documents (the bootstrap's groups) and the bootstrap settings."""

    gold: np.ndarray
    characters: np.ndarray
    groups: np.ndarray
    what: str
    settings: argparse.Namespace


def flag_columns(read: EvaluatedTokens, flagged: np.ndarray, scores: FlaggedPRF, name: str) -> dict[str, Any]:
    """Token and character precision, recall and F1 of `flagged` (`scores`), each F1 with its document-bootstrap
    interval."""
    from factlab.metaeval.localisation import character_f1, token_f1

    tokens, characters = scores.tokens, scores.characters
    settings, groups = read.settings, read.groups
    low, high = _interval(token_f1, read.gold, flagged, groups=groups, settings=settings, what=f"{read.what} F1 {name}")
    char_low, char_high = _interval(
        character_f1, read.gold, flagged, read.characters, groups=groups, settings=settings, what=f"{read.what} char F1 {name}"
    )
    return {
        "n_tokens": tokens.n_tokens,
        "n_unsupported": tokens.n_unsupported,
        "base_rate": tokens.n_unsupported / tokens.n_tokens,
        "n_flagged": tokens.n_flagged,
        "precision": tokens.precision,
        "recall": tokens.recall,
        "f1": tokens.f1,
        "f1_ci_low": low,
        "f1_ci_high": high,
        "n_characters": characters.n_characters,
        "n_unsupported_characters": characters.n_unsupported,
        "n_flagged_characters": characters.n_flagged,
        "char_precision": characters.precision,
        "char_recall": characters.recall,
        "char_f1": characters.f1,
        "char_f1_ci_low": char_low,
        "char_f1_ci_high": char_high,
    }


def auc_columns(read: EvaluatedTokens, support: np.ndarray, name: str = "") -> dict[str, float]:
    """The token ROC AUC of `support` with its document-bootstrap interval (NaN where undefined)."""
    import numpy as np

    from factlab.metaeval.localisation import token_roc_auc

    what = f"{read.what} AUC {name}".rstrip()
    try:
        auc = token_roc_auc(read.gold, support)
        low, high = _interval(token_roc_auc, read.gold, support, groups=read.groups, settings=read.settings, what=what)
    except StatisticsError as error:
        LOG.warning("%s: no AUC (%s)", what, error)
        auc = low = high = np.nan
    return {"roc_auc": auc, "roc_auc_ci_low": low, "roc_auc_ci_high": high}


def agreement_report(gold: dict[str, GoldExample], parts: dict[str, str]) -> dict[str, Any] | None:
    """Token agreement of the annotators over all outputs and over the evaluated part; None without annotators."""
    from factlab.metaeval.localisation import token_agreement

    annotated = {eid: example.workers for eid, example in gold.items() if example.workers is not None}
    if not annotated or max(workers.shape[0] for workers in annotated.values()) < 2:
        return None
    report = {}
    for name, keep in (("all", set(annotated)), (EVALUATED, {eid for eid in annotated if parts[eid] == EVALUATED})):
        try:
            report[name] = asdict(token_agreement([annotated[eid] for eid in sorted(keep)]))
        except StatisticsError as error:
            LOG.warning("no token agreement on %s outputs (%s)", name, error)
    return report


@dataclass
class GoldTable:
    benchmark: str
    path: str
    gold: dict[str, GoldExample]
    parts: dict[str, str]
    split: dict[str, Any]
    sources: dict[str, str] | None  # example_id -> source (`--sources`), for the token localiser


def read_sources(path: str) -> dict[str, str]:
    frame = read_example_table(path, ("example_id", "source"))
    return dict(zip(frame["example_id"].astype(str), frame["source"].astype(str), strict=True))


def lexical_floor(table: GoldTable) -> dict[str, np.ndarray] | None:
    """example_id -> the lexical floor's flags of its gold tokens (words its source lacks), for each gold output
    with a source (a scored output without one is refused where it is read); None without sources."""
    from factlab.metaeval.localisation import lexically_novel

    if table.sources is None:
        return None
    return {
        example_id: lexically_novel([example.output[start:end] for start, end in example.offsets], table.sources[example_id])
        for example_id, example in table.gold.items()
        if example_id in table.sources
    }


# The word features of each (score table, example): the localiser's fit and its reading share them.
WordCache = dict[tuple[str, str], "WordFeatures"]


def example_words(table: GoldTable, example_id: str, pieces: Any, *, file: str, cache: WordCache) -> WordFeatures:
    """The token localiser's features of one scored output's words (computed once per score table)."""
    from factlab.models.token_localiser import word_features
    from factlab.models.token_words import piece_arrays

    if (file, example_id) in cache:
        return cache[(file, example_id)]
    if table.sources is None or example_id not in table.sources:
        raise DataError("no source for the scored output (--sources)", file=file, record=example_id, field="example_id")
    arrays = piece_arrays(pieces)
    if arrays is None:
        raise DataError("no token detail", file=file, record=example_id, field=TOKEN_DETAIL)
    cache[(file, example_id)] = word_features(table.gold[example_id].output, table.sources[example_id], *arrays)
    return cache[(file, example_id)]


def localiser_training_tokens(
    table: GoldTable, scores: pd.DataFrame, *, file: str, cache: WordCache
) -> tuple[np.ndarray, np.ndarray]:
    """(features, 0/1 unsupported) of the validation part's gold tokens: each token takes the features of the
    word over it that the head finds least supported (the projection the analysis uses); tokens under no
    word are left out."""
    import numpy as np
    import pandas as pd

    from factlab.metaeval.localisation import project_unit_support
    from factlab.models.token_localiser import FEATURES
    from factlab.models.token_words import piece_arrays

    values, labels = [], []
    for row in scores.itertuples(index=False):
        example_id = str(row.example_id)
        pieces = getattr(row, TOKEN_DETAIL)
        if table.parts.get(example_id) != VALIDATION or pd.isna(row.score) or piece_arrays(pieces) is None:
            continue
        words = example_words(table, example_id, pieces, file=file, cache=cache)
        example = table.gold[example_id]
        projected = project_unit_support(example.offsets, [[span] for span in words.spans], 1.0 - words.values[:, 0])
        covered = projected.sentence_index >= 0
        values.append(words.values[projected.sentence_index[covered]])
        labels.append(example.unsupported[covered])
    if not values:
        return np.zeros((0, len(FEATURES))), np.zeros(0, dtype=np.int64)
    return np.concatenate(values), np.concatenate(labels)


def localised_scores(
    table: GoldTable, scores: pd.DataFrame, localiser: TokenLocaliser, *, file: str, cache: WordCache
) -> pd.DataFrame:
    """`scores` with its token detail replaced by the localiser's words (start, end, support = 1 - P(unsupported))."""
    import pandas as pd

    from factlab.models.token_words import piece_arrays

    words = []
    for row in scores.itertuples(index=False):
        pieces = getattr(row, TOKEN_DETAIL)
        if pd.isna(row.score) or piece_arrays(pieces) is None or str(row.example_id) not in table.gold:
            words.append(None)
            continue
        found = example_words(table, str(row.example_id), pieces, file=file, cache=cache)
        probabilities = localiser.unsupported(found.values)
        words.append(
            [
                {"start": int(start), "end": int(end), "support": float(1.0 - p)}
                for (start, end), p in zip(found.spans, probabilities, strict=True)
            ]
        )
    return scores.assign(**{TOKEN_DETAIL: words})


def fit_localisers(
    tables: list[GoldTable], by_benchmark: dict[str, list[str]], score_tables: dict[str, pd.DataFrame], cache: WordCache
) -> dict[str, dict[str, Any]]:
    """Per scorer with token detail, a token localiser fit on the validation tokens of every gold table with
    sources, and what it was fit on."""
    import numpy as np

    from factlab.models.token_localiser import fit_localiser

    pooled: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
    for table in tables:
        if table.sources is None:
            continue
        for path in sorted(by_benchmark.get(table.benchmark, [])):
            scores = score_tables[path]
            if TOKEN_DETAIL in scores.columns:
                pooled.setdefault(Path(path).stem, {})[Path(table.path).stem] = localiser_training_tokens(
                    table, scores, file=path, cache=cache
                )
    fitted = {}
    for scorer, parts in sorted(pooled.items()):
        values = np.concatenate([found for found, _ in parts.values()])
        labels = np.concatenate([found for _, found in parts.values()])
        try:
            localiser = fit_localiser(values, labels)
        except ValueError as error:
            LOG.warning("%s: no token localiser (%s)", scorer, error)
            continue
        fitted[scorer] = localiser.to_dict() | {
            "fitted_on": {dataset: {"part": VALIDATION, "tokens": len(found)} for dataset, (_, found) in parts.items()}
        }
    return fitted


@dataclass
class LocalisationInputs:
    """What the localisation analysis and the checker's token reading (factlab.metaeval.analyses.token_reading_command) read
    alike: the gold tables with their parts and sources, the score tables by scored benchmark, and the token
    localisers fit on the validation tokens."""

    tables: list[GoldTable]
    by_benchmark: dict[str, list[str]]  # scored benchmark -> its score files
    score_tables: dict[str, pd.DataFrame]
    cache: WordCache
    localisers: dict[str, Any]


def read_localisation_inputs(args: argparse.Namespace) -> LocalisationInputs:
    """The gold tables (`--gold`, split by `--val-fraction` and `--seed`, with `--sources`), the score tables
    (`--scores`, each of a benchmark with a gold table) and the localisers fit on them."""
    gold_paths = benchmark_arguments(args.gold, "--gold", "path")
    source_paths = benchmark_arguments(args.sources, "--sources", "path") if args.sources else {}
    by_benchmark: dict[str, list[str]] = {}
    for path in args.scores:
        benchmark = Path(path).parent.name
        if benchmark not in gold_paths:
            raise FactlabError(f"{path}: no --gold table for benchmark {benchmark!r} (given: {sorted(gold_paths)})")
        by_benchmark.setdefault(benchmark, []).append(path)
    tables = []
    for benchmark, gold_path in sorted(gold_paths.items()):
        gold = read_gold(gold_path)
        parts, split = split_parts(gold, file=gold_path, val_fraction=args.val_fraction, seed=args.seed)
        sources = read_sources(source_paths[benchmark]) if benchmark in source_paths else None
        tables.append(GoldTable(benchmark, gold_path, gold, parts, split, sources))
    score_tables = {path: read_example_table(path, SCORE_COLUMNS) for path in args.scores}
    cache: WordCache = {}
    localisers = fit_localisers(tables, by_benchmark, score_tables, cache)
    return LocalisationInputs(tables, by_benchmark, score_tables, cache, localisers)


def run_localisation(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.models.token_localiser import TokenLocaliser

    inputs = read_localisation_inputs(args)
    tables, by_benchmark, score_tables, cache, localisers = (
        inputs.tables,
        inputs.by_benchmark,
        inputs.score_tables,
        inputs.cache,
        inputs.localisers,
    )
    rows: list[dict[str, Any]] = []
    report: dict[str, Any] = {"policies": list(args.policies), "datasets": {}, "localisers": localisers}
    for table in tables:
        dataset = Path(table.path).stem
        entry: dict[str, Any] = {
            "gold": table.path,
            "scored_benchmark": table.benchmark,
            "examples": len(table.gold),
            "tokens": int(sum(len(example.offsets) for example in table.gold.values())),
            "split": table.split,
            "agreement": agreement_report(table.gold, table.parts),
            "scorers": {},
        }
        lexical = lexical_floor(table)
        for path in sorted(by_benchmark.get(table.benchmark, [])):
            scores = score_tables[path]
            stem = Path(path).stem
            readings = [(stem, "", scores)]
            if TOKEN_DETAIL in scores.columns:
                readings.append((stem + TOKEN_SUFFIX, TOKEN_DETAIL, scores))
                if stem in localisers and table.sources is not None:
                    localiser = TokenLocaliser.from_dict(localisers[stem])
                    readings.append(
                        (
                            stem + LOCALISER_SUFFIX,
                            TOKEN_DETAIL,
                            localised_scores(table, scores, localiser, file=path, cache=cache),
                        )
                    )
            for scorer, detail, read in readings:
                tokens, counts = scored_tokens(path, table.gold, table.parts, scores=read, detail=detail, lexical=lexical)
                n_unscored = sum(1 for part in table.parts.values() if part == EVALUATED) - int(
                    tokens.loc[tokens["part"] == EVALUATED, "example_id"].nunique()
                )
                scorer_rows, thresholds = localisation_rows(
                    dataset, scorer, tokens, n_unscored, counts["tokens_outside_units"], args
                )
                rows += scorer_rows
                entry["scorers"][scorer] = {"scores": path, "thresholds": thresholds, **counts}
        report["datasets"][dataset] = entry
    table_frame = pd.DataFrame(rows, columns=list(COLUMNS))
    write_text(table_frame.to_csv(index=False, float_format="%.6g"), args.out)
    write_report(report, args.report)
    write_json(headline_metrics(table_frame), args.out_metrics)
    if args.localiser_out:
        write_json(localisers, args.localiser_out)


def headline_metrics(table: pd.DataFrame) -> dict[str, Any]:
    """metrics.json (`dvc metrics show`): per scorer and gold dataset, the scorer's token ROC AUC, and the token F1
    and character F1 under each threshold policy and of each floor (`f1_flag_all`, `char_f1_lexical_floor`, on the
    same tokens as the scorer's)."""

    metrics: dict[str, Any] = {}
    for row in table.itertuples(index=False):
        entry = metrics.setdefault(row.scorer, {}).setdefault(row.dataset, {})
        if row.policy not in FLOORS:
            entry["roc_auc"] = headline_number(row.roc_auc)
        entry[f"f1_{row.policy}"] = headline_number(row.f1)
        entry[f"char_f1_{row.policy}"] = headline_number(row.char_f1)
    return metrics
