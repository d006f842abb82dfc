"""Text units for the preprocess stage: sentences with offsets, chunks, OpenIE-style triples.

- `sentences`: `split_sentences` (pysbd or spaCy) -> `Sentence(text, start, end)`.
- `chunking`: AlignScore word chunks, SCALE token windows, greedy sentence packing, each with a
  `ChunkReport` counting every cut.
- `triples`: `extract_triples(doc)` from a dependency parse, and its gold-set scoring.
- `nlp`: the one cached place spaCy is loaded.
"""

from factlab.text.chunking import (
    ChunkReport,
    SentenceChunk,
    TokenWindow,
    alignscore_chunks,
    pack_sentences,
    token_windows,
)
from factlab.text.sentences import Sentence, split_sentences, split_sentences_many, word_count
from factlab.text.triples import Triple, extract_triples, extract_triples_many

__all__ = [
    "ChunkReport",
    "Sentence",
    "SentenceChunk",
    "TokenWindow",
    "Triple",
    "alignscore_chunks",
    "extract_triples",
    "extract_triples_many",
    "pack_sentences",
    "split_sentences",
    "split_sentences_many",
    "token_windows",
    "word_count",
]
