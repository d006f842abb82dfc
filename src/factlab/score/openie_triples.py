"""FRANK's OpenIE baseline: the share of an output's triples that some source triple matches.

On the preprocess triples: each element (subject, relation, object) embedded with MiniLM
(`factlab.score.sentence_encoder`); an output triple is matched when some source triple has all
three cosines above `threshold` (0.6); score = share of matched output triples, NaN (counted) for
an output without triples. Deviations: triples come from factlab's spaCy-based extractor
(`factlab.preprocess.triples`), not Stanford OpenIE, and the source gets no coreference
replacement. The best source triple of an output triple is the one whose smallest element cosine
is largest.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from factlab.errors import ConfigError, DataError
from factlab.score.baseline_frame import Owners, Scored, sentence_detail
from factlab.score.sentence_encoder import EncoderSettings, SentenceEncoder, embed_distinct, load_sentence_encoder
from factlab.text.sentences import Sentence

LOG = logging.getLogger(__name__)
TRIPLE_ELEMENTS = ("subject", "relation", "object")
TRIPLE_COLUMNS = ("side", "doc_id", "example_id", "sentence_index", "triple_index", *TRIPLE_ELEMENTS)


@dataclass(frozen=True)
class OpenIETriplesSettings(EncoderSettings):
    threshold: float = 0.6  # FRANK: a triple matches when all three element cosines exceed it

    def __post_init__(self) -> None:
        super().__post_init__()
        if not -1.0 <= self.threshold <= 1.0:
            raise ConfigError(f"openie threshold is a cosine, in [-1, 1]; got {self.threshold}")


def _check_triples(triples: pd.DataFrame) -> None:
    missing = [name for name in TRIPLE_COLUMNS if name not in triples.columns]
    if missing:
        raise DataError(
            f"the triples lack the columns {missing} (results/preprocess/<benchmark>/triples.parquet)", field=missing[0]
        )


def _triples_by_owner(triples: pd.DataFrame, side: str, owner: str) -> dict[str, list[tuple[int, str, str, str]]]:
    """owner -> its triples as (sentence_index, subject, relation, object), in sentence and triple order."""
    rows = triples[triples["side"] == side].sort_values([owner, "sentence_index", "triple_index"])
    grouped: dict[str, list[tuple[int, str, str, str]]] = {}
    columns = (rows[owner], rows["sentence_index"], *(rows[name] for name in TRIPLE_ELEMENTS))
    for key, index, subject, relation, obj in zip(*columns, strict=True):
        grouped.setdefault(str(key), []).append((int(index), str(subject), str(relation), str(obj)))
    return grouped


def score_openie_triples(
    examples: pd.DataFrame,
    sentences: pd.DataFrame,
    settings: OpenIETriplesSettings,
    triples: pd.DataFrame,
    encoder: SentenceEncoder | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Share of each output's triples matched by a source triple (all three element cosines > threshold)."""
    _check_triples(triples)
    owners = Owners.of(examples, sentences)
    source_triples = _triples_by_owner(triples, "source", "doc_id")
    output_triples = _triples_by_owner(triples, "output", "example_id")
    encoder = encoder or load_sentence_encoder()
    elements = [
        element
        for _, example_id, doc_id, outputs, _ in owners.rows()
        if outputs
        for triple in (*output_triples.get(example_id, []), *source_triples.get(doc_id, []))
        for element in triple[1:]
    ]
    rows, embedded = embed_distinct(elements, encoder, settings, "openie triple elements")
    scored = Scored()
    without_triples = without_source_triples = n_triples = n_matched = 0
    for _, example_id, doc_id, outputs, sources in owners.rows():
        if scored.skip(example_id, outputs, sources):
            continue
        found, against = output_triples.get(example_id, []), source_triples.get(doc_id, [])
        _check_sentence_indices(found, len(outputs), f"output of example_id {example_id!r}")
        _check_sentence_indices(against, len(sources), f"source of doc_id {doc_id!r}")
        without_triples += not found
        without_source_triples += bool(found) and not against
        matches = _match_triples(found, against, sources, rows, embedded.vectors, settings.threshold)
        n_triples += len(found)
        n_matched += sum(item["matched"] for item in matches)
        detail = []
        for index, sentence in enumerate(outputs):
            mine = [
                {key: value for key, value in item.items() if key != "sentence_index"}
                for item in matches
                if item["sentence_index"] == index
            ]
            support = float(np.mean([item["matched"] for item in mine])) if mine else float("nan")
            detail.append(sentence_detail(index, sentence, support, n_triples=len(mine), triples=mine))
        score = float(np.mean([item["matched"] for item in matches])) if matches else float("nan")
        scored.add(example_id, score, detail, n_triples=len(found), n_source_triples=len(against))
    if without_triples:
        LOG.warning("openie triples: %d examples have no output triple: their score is NaN", without_triples)
    return scored.result(
        "openie triples",
        examples_without_output_triples=without_triples,
        examples_without_source_triples=without_source_triples,
        output_triples=n_triples,
        output_triples_matched=n_matched,
        **embedded.counts,
    )


def _check_sentence_indices(triples: Sequence[tuple[int, str, str, str]], n_sentences: int, where: str) -> None:
    if any(not 0 <= triple[0] < n_sentences for triple in triples):
        raise DataError(
            f"the triples of the {where} name a sentence it does not have (triples from other sentences?)", record=where
        )


def _match_triples(
    found: Sequence[tuple[int, str, str, str]],
    against: Sequence[tuple[int, str, str, str]],
    sources: Sequence[Sentence],
    rows: dict[str, int],
    vectors: np.ndarray,
    threshold: float,
) -> list[dict[str, Any]]:
    """Each output triple with its best source triple (largest smallest-element cosine) and whether it matches."""
    if not found:
        return []
    if against:
        # (output triples, source triples): the smallest of the three element cosines
        weakest = np.min(
            [vectors[[rows[t[k]] for t in found]] @ vectors[[rows[t[k]] for t in against]].T for k in (1, 2, 3)], axis=0
        )
        best = weakest.argmax(axis=1)
    matches = []
    for i, (sentence_index, subject, relation, obj) in enumerate(found):
        similarity = float(weakest[i, best[i]]) if against else float("nan")
        source = sources[against[best[i]][0]] if against else None
        matches.append(
            {
                "sentence_index": sentence_index,
                "subject": subject,
                "relation": relation,
                "object": obj,
                "matched": bool(similarity > threshold),  # False for NaN: no source triple
                "similarity": similarity,  # smallest element cosine with the best source triple
                "best_source_sentence": against[best[i]][0] if against else None,
                "source_start": source.start if source else None,
                "source_end": source.end if source else None,
            }
        )
    return matches
