"""factlab's library face: score your own (source, output) pairs with the project's trained checker.

    import factlab
    frame = factlab.check(sources, outputs)            # one call: loads the model, scores, returns a DataFrame
    checker = factlab.Checker()                        # load once ...
    frame = checker.check(sources, outputs)            # ... score many times

The model is the checker folder `results/checker/model` (`make checker` builds it alone, `make run` with the rest), or
`model=`: another checker folder, a trained aligner folder, or a hub id / folder of an NLI classifier. Scores
are the pipeline's AlignScore scores (`factlab score alignscore`, same sentence splitter, chunks, support head,
aggregation and engine): the output's sentences are each checked against the source's chunks, a sentence's
support is its best chunk's, the score aggregates the sentences.

One row per pair (`RESULT_COLUMNS`): `score` in [0, 1] (higher: more consistent), `verdict` (consistent,
inconsistent, or uncertain inside the uncertain band a calibration recorded with the model: `factlab calibrate`),
`consistent` (the verdict as a boolean: score >= the threshold recorded with the model; null when uncertain),
`reliable` and `flags` (factlab.data.judgeable: a pair with no words gets no score; a pair that is not English is
scored but not reliable), `sentences`: per output sentence its text,
character offsets in the output, support, `evidence_start`/`evidence_end` (the character span of the source
chunk that supports it best) and `evidence` (the source sentences of that chunk that support it best, best
first, with their offsets in the source and support); and `spans`: the output's unsupported phrases, when the
model has a token head (factlab.models.token_support): character offsets in the output, the text, the
largest P(unsupported) of its words, the output sentence it lies in, and a one-sentence explanation from its
sentence's evidence (factlab.checker.explain); and `correction`, for an inconsistent output with spans: the output with the
fixes the checker itself then finds supported (factlab.checker.correct), and each edit with its offsets and the
sentence's support before and after (null for an output the checker finds consistent or without spans); a word is
marked when its P(unsupported) passes the token threshold recorded with the model.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from factlab.checker.folder import CheckerSettings, resolve_model
from factlab.checker.inputs import pairs_frame
from factlab.data.judgeable import UNSCORABLE, judge_flags

if TYPE_CHECKING:
    from factlab.models.token_localiser import TokenLocaliser
    from factlab.score.alignscore import AlignScoreSettings

from factlab.checker.explain import span_records

CONSISTENT, INCONSISTENT, UNCERTAIN = "consistent", "inconsistent", "uncertain"
VERDICTS = {1: CONSISTENT, 0: INCONSISTENT, -1: UNCERTAIN}  # factlab.checker.calibration.verdicts' codes
ROWS_PER_STEP = 32  # pairs checked together: a step of the progress bar, and what is held in memory at once
RESULT_COLUMNS = ("id", "score", "verdict", "consistent", "threshold", "reliable", "flags", "sentences", "spans", "correction")


class Checker:
    """A loaded checker: `check` scores lists of pairs; the weights load once, at the first pair scored."""

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        device: str = "auto",
        threads: int = 0,
        progress: bool = False,
        runtime: str = "auto",
    ) -> None:
        from factlab.models.loading import load_pair_scorer
        from factlab.runtime import set_threads

        self.model, self.settings = resolve_model(model)
        set_threads(threads)
        self.progress = progress
        started = time.perf_counter()
        self.scorer = load_pair_scorer(
            self.model, device=device, entailment_label=self.settings.entailment_label, runtime=runtime, threads=threads
        )
        self.load_seconds = time.perf_counter() - started

    @property
    def runtime(self) -> str:
        """What runs the model: openvino (a checker folder's compiled graph, no torch) or torch."""
        return str(getattr(self.scorer, "runtime", "torch"))

    @property
    def precision(self) -> str:
        """fp32 or bf16: the recorded precision as it resolves on this machine (factlab.models.engine)."""
        from factlab.models.engine import resolve_precision

        return resolve_precision(self.settings.precision, self.scorer.device)

    @property
    def threshold(self) -> float:
        return self.settings.threshold

    @property
    def localiser(self) -> TokenLocaliser | None:
        """The token localiser recorded with the model (factlab.models.token_localiser), if any."""
        from factlab.models.token_localiser import TokenLocaliser

        recorded = self.settings.token_localiser
        return TokenLocaliser.from_dict(recorded) if recorded else None

    def verdict(self, score: float) -> str:
        """consistent at or above the threshold, inconsistent below it, and uncertain inside the uncertain band
        recorded with the model, where neither verdict reached its precision (factlab.checker.calibration.verdicts)."""
        from factlab.checker.calibration import verdicts

        band = self.settings.uncertain_band
        return VERDICTS[int(verdicts([score], self.threshold, None if band is None else (band[0], band[1]))[0])]

    def check(self, sources: Sequence[str], outputs: Sequence[str], ids: Sequence[Any] | None = None) -> pd.DataFrame:
        """One row per (source, output) pair, in order (`RESULT_COLUMNS`)."""
        return self.check_pairs(pairs_frame(sources, outputs, ids))

    def check_pairs(self, pairs: pd.DataFrame) -> pd.DataFrame:
        """`check` on a frame of `id, source, output` (factlab.checker.inputs), `ROWS_PER_STEP` rows at a time under
        one progress bar (a row's answer does not depend on the rows checked with it: factlab.batching)."""
        steps = list(self.check_steps(pairs))
        return pd.concat(steps, ignore_index=True) if steps else pd.DataFrame(columns=list(RESULT_COLUMNS))

    def check_steps(self, pairs: pd.DataFrame, done: int = 0) -> Iterator[pd.DataFrame]:
        """The results of `pairs`, `ROWS_PER_STEP` rows at a time, in order, as each step is checked: what a long file
        streams to its output (memory bounded by a step). The progress bar (rate, time left) counts `done` rows checked
        before these (a resumed file)."""
        from tqdm import tqdm

        total = done + len(pairs)
        with tqdm(
            total=total, initial=done, desc="factlab check", unit="pair", disable=not self.progress, file=sys.stderr
        ) as bar:
            for start in range(0, len(pairs), ROWS_PER_STEP):
                step = pairs.iloc[start : start + ROWS_PER_STEP]
                yield self.check_step(step)
                bar.update(len(step))

    def check_step(self, pairs: pd.DataFrame) -> pd.DataFrame:
        """`check_pairs` on a few rows, with no progress bar of its own."""
        localiser = self.localiser
        flags = [judge_flags(source, output) for source, output in zip(pairs["source"], pairs["output"], strict=True)]
        scorable = [not set(found) & set(UNSCORABLE) for found in flags]
        scored = score_frame(pairs[scorable], self.scorer, self.settings, progress=False)
        by_id = dict(zip(scored["example_id"], scored.to_dict("records"), strict=True))
        rows = []
        outputs = dict(zip(pairs["id"].astype(str), pairs["output"].astype(str), strict=True))
        sources = dict(zip(pairs["id"].astype(str), pairs["source"].astype(str), strict=True))
        for example_id, found in zip(pairs["id"].astype(str), flags, strict=True):
            source = sources[example_id]
            result = by_id.get(example_id)
            score = None if result is None or pd.isna(result["score"]) else float(result["score"])
            verdict = None if score is None else self.verdict(score)
            rows.append(
                {
                    "id": example_id,
                    "score": score,
                    "verdict": verdict,
                    "consistent": as_consistent(verdict),
                    "threshold": self.threshold,
                    "reliable": score is not None and not found,
                    "flags": found,
                    "sentences": [] if result is None else [evidence_record(item, source) for item in result["sentences"]],
                    "spans": []
                    if result is None
                    else span_records(result, outputs[example_id], self.settings.token_threshold, source, localiser),
                }
            )
        corrections = self.corrections(rows, by_id, outputs, sources)
        for row in rows:
            row["correction"] = corrections.get(row["id"])
        return pd.DataFrame(rows, columns=list(RESULT_COLUMNS))

    def table_rows(
        self, pairs: pd.DataFrame, scores: pd.DataFrame
    ) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, str], dict[str, str]]:
        """What `factlab check` gives the scored outputs of `pairs` (example_id, source, output), read off the pipeline's
        AlignScore table of them (`scores`: example_id, score, sentences, tokens) instead of scoring them again: per
        output its row (id, consistent, spans), and by id its sentence detail, output and source; the inputs of
        `corrections` and `rewrite_supports`."""
        by_id = {str(row["example_id"]): row for row in scores.to_dict("records")}
        outputs = dict(zip(pairs["example_id"].astype(str), pairs["output"].astype(str), strict=True))
        sources = dict(zip(pairs["example_id"].astype(str), pairs["source"].astype(str), strict=True))
        rows, details, localiser = [], {}, self.localiser
        for example_id in outputs:
            scored = by_id.get(example_id)
            if scored is None or pd.isna(scored["score"]) or scored["sentences"] is None:
                continue
            details[example_id] = {"sentences": list(scored["sentences"])}
            result = {"tokens": scored["tokens"], "sentences": details[example_id]["sentences"]}
            spans = span_records(result, outputs[example_id], self.settings.token_threshold, sources[example_id], localiser)
            rows.append({"id": example_id, "spans": spans, "consistent": as_consistent(self.verdict(float(scored["score"])))})
        return rows, details, outputs, sources

    def corrections(
        self, rows: list[dict[str, Any]], by_id: dict[str, Any], outputs: dict[str, str], sources: dict[str, str]
    ) -> dict[str, dict[str, Any]]:
        """id -> the suggested fix of each output found inconsistent with unsupported spans (`failing`;
        factlab.checker.correct): the corrected text and its edits that reach the folder's edit bar (CheckerSettings.
        edit_bar), the output unchanged and no edit where none does (whatever the other rows offer)."""
        from factlab.checker.correct import apply_edits

        bar = self.settings.edit_bar
        chosen = {key: edit for key, edit in self.scored_edits(rows, by_id, outputs, sources).items() if edit[1] >= bar}
        result = {}
        for position, row in enumerate(rows):
            edits = [edit for (index, _), edit in chosen.items() if index == position]
            if failing(row):
                text, records = apply_edits(outputs[row["id"]], edits)
                result[row["id"]] = {"text": text, "edits": records}
        return result

    def rewrite_supports(
        self, rows: list[dict[str, Any]], by_id: dict[str, Any], outputs: dict[str, str], sources: dict[str, str]
    ) -> dict[str, float]:
        """id -> the highest support among the best edits of an output's spans that beat their sentence's own: the
        output's correction rewrites it at any bar up to this (outputs no edit improves are absent)."""
        found: dict[str, float] = {}
        for (position, _), (_, support, _) in self.scored_edits(rows, by_id, outputs, sources).items():
            example_id = rows[position]["id"]
            found[example_id] = max(support, found.get(example_id, support))
        return found

    def scored_edits(
        self, rows: list[dict[str, Any]], by_id: dict[str, Any], outputs: dict[str, str], sources: dict[str, str]
    ) -> dict[tuple[int, int], Any]:
        """(row position, span) -> (its best candidate edit, the edit's support, the sentence's own), for the spans
        of outputs that get a correction whose best edit beats the sentence (factlab.checker.correct.best_edits); one
        engine call scores every candidate and every sentence it would replace."""
        from factlab.checker.correct import best_edits, span_candidates
        from factlab.models.engine import engine_settings, score_pairs
        from factlab.models.support_heads import with_support_head

        candidates = []
        for position, row in enumerate(rows):
            if not failing(row):
                continue
            details = (by_id.get(row["id"]) or {}).get("sentences")
            for index, span in enumerate(row["spans"]):
                if details is None or span["sentence"] is None:
                    continue
                sentence = details[span["sentence"]]
                candidates += span_candidates(position, index, span, outputs[row["id"]], sources[row["id"]], sentence)
        if not candidates:
            return {}
        originals = sorted({(c.premise, c.original) for c in candidates})
        pairs = originals + [(c.premise, c.sentence) for c in candidates]
        reader = with_support_head(self.scorer, self.settings.support_head)
        engine = engine_settings(self.settings, self.scorer.device, progress=False)
        supports = score_pairs(reader, pairs, engine, description="corrections").scores
        before = dict(zip(originals, supports[: len(originals)], strict=True))
        return best_edits(candidates, supports[len(originals) :], before)


def as_consistent(verdict: str | None) -> bool | None:
    """A verdict as the `consistent` field: null without a score and when uncertain."""
    return None if verdict in (None, UNCERTAIN) else verdict == CONSISTENT


def failing(row: dict[str, Any]) -> bool:
    """Whether an output gets a correction: the checker finds it inconsistent and marks spans in it. An output it
    finds consistent is never changed, whatever its spans."""
    return row["consistent"] is False and bool(row["spans"])


def check(
    sources: Sequence[str],
    outputs: Sequence[str],
    *,
    ids: Sequence[Any] | None = None,
    model: str | Path | None = None,
    device: str = "auto",
    runtime: str = "auto",
) -> pd.DataFrame:
    """Score pairs with a checker loaded for this call (`Checker` to load once for many calls)."""
    return Checker(model, device=device, runtime=runtime).check(sources, outputs, ids)


def examples_frame(pairs: pd.DataFrame) -> pd.DataFrame:
    """`id, source, output` pairs as a benchmark's examples (example_id, doc_id, source, output): a source's
    document id is its text's hash, so that pairs of one source share its chunks."""
    from factlab.data.adapters.custom import doc_id_from_source

    return pd.DataFrame(
        {
            "example_id": pairs["id"].astype(str).tolist(),
            "doc_id": [doc_id_from_source(source) for source in pairs["source"]],
            "source": pairs["source"].tolist(),
            "output": pairs["output"].tolist(),
        }
    )


def score_frame(pairs: pd.DataFrame, scorer: Any, settings: CheckerSettings, *, progress: bool) -> pd.DataFrame:
    """The pipeline's AlignScore table (example_id, score, sentences) of `pairs` (`id, source, output`)."""
    from factlab.models.engine import engine_settings
    from factlab.preprocess.benchmark import sentence_units
    from factlab.score.alignscore import score_benchmark

    if pairs.empty:
        return pd.DataFrame({"example_id": [], "score": [], "sentences": []})
    examples = examples_frame(pairs)
    sentences, _ = sentence_units(examples, "check", settings.sentence_splitter, progress=progress)
    engine = engine_settings(settings, scorer.device, progress=progress)
    scores, _ = score_benchmark(examples, sentences, scorer, alignscore_settings(settings, localise=True), engine)
    return scores


def alignscore_settings(settings: CheckerSettings, *, localise: bool) -> AlignScoreSettings:
    """AlignScore as the checker card reads it: chunk size and policy, pre-ranked chunks, support head, aggregation."""
    from factlab.score.alignscore import AlignScoreSettings

    return AlignScoreSettings(
        settings.words_per_chunk,
        settings.chunk_policy,  # type: ignore[arg-type]
        settings.aggregation,
        settings.support_head,
        localise=localise,
        top_chunks=settings.top_chunks,
    )


def evidence_record(detail: dict[str, Any], source: str) -> dict[str, Any]:
    """One output sentence as the checker returns it: its text and offsets, support, the best chunk's span and
    the best evidence sentences inside it."""
    return {
        "text": detail["sentence"],
        "start": int(detail["start"]),
        "end": int(detail["end"]),
        "support": float(detail["support"]),
        "evidence_start": int(detail["chunk_start"]),
        "evidence_end": int(detail["chunk_end"]),
        "evidence": [
            {
                "text": source[int(item["start"]) : int(item["end"])],
                "start": int(item["start"]),
                "end": int(item["end"]),
                "support": float(item["support"]),
            }
            for item in detail.get("evidence", [])
        ],
    }
