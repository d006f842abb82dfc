"""FRANK's embedding-cosine baseline: each output sentence's largest cosine with a source sentence.

MiniLM sentence embeddings (`factlab.score.sentence_encoder`); an output sentence's support is its
largest cosine with a source sentence, the example score the mean over output sentences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from factlab.score.baseline_frame import Owners, Scored, best_source, sentence_detail
from factlab.score.sentence_encoder import EncoderSettings, SentenceEncoder, embed_distinct, load_sentence_encoder


@dataclass(frozen=True)
class EmbeddingCosineSettings(EncoderSettings):
    pass


def score_embedding_cosine(
    examples: pd.DataFrame,
    sentences: pd.DataFrame,
    settings: EmbeddingCosineSettings,
    encoder: SentenceEncoder | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Per output sentence the largest cosine with a source sentence; example score = their mean."""
    owners = Owners.of(examples, sentences)
    encoder = encoder or load_sentence_encoder()
    texts = [s.text for _, _, _, outputs, sources in owners.rows() if outputs for s in (*sources, *outputs)]
    rows, embedded = embed_distinct(texts, encoder, settings, "embedding cosine")
    scored = Scored()
    for _, example_id, _, outputs, sources in owners.rows():
        if scored.skip(example_id, outputs, sources):
            continue
        out_rows = [rows[s.text] for s in outputs]
        similarity = embedded.vectors[out_rows] @ embedded.vectors[[rows[s.text] for s in sources]].T
        best = similarity.argmax(axis=1)
        detail = [
            sentence_detail(
                index,
                sentence,
                float(similarity[index, best[index]]),
                **best_source(sources, int(best[index])),
                pieces_cut=int(embedded.pieces_cut[out_rows[index]]),
            )
            for index, sentence in enumerate(outputs)
        ]
        scored.add(example_id, np.mean([item["support"] for item in detail]), detail, n_source_sentences=len(sources))
    return scored.result("embedding cosine", **embedded.counts)
