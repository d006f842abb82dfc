"""Preprocess stage: a benchmark's sources and outputs cut into the units scorers read.

- `sentences`: `split_sentences` (pysbd or spaCy) -> `Sentence(text, start, end)`.
- `chunking`: AlignScore word chunks, SCALE token windows, greedy sentence packing, each with a
  `ChunkReport` counting every cut; the scorers cut each source when they score it, with their own settings.
- `triples`: `extract_triples(doc)` from a dependency parse, and its gold-set scoring.
- `benchmark`: a canonical benchmark frame -> sentence and triple frames + reports.
- `qas`: QASem QA pairs of every output sentence (factlab's parser or a hub T5).
spaCy and the MiniLM tokenizer are loaded by `factlab.runtime`.
"""
