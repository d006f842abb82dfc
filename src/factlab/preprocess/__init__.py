"""Preprocess stage: a benchmark's sources and outputs cut into the units scorers read.

The units themselves (sentences, chunks, words) are factlab.text, which scorers, training and the checker also
call at run time; this package holds what only the stage runs:
- `triples`: `extract_triples(doc)` from a dependency parse, and its gold-set scoring.
- `benchmark`: a canonical benchmark frame -> sentence and triple frames + reports.
- `qas`: QASem QA pairs of every output sentence (factlab's parser or a hub T5).
spaCy and the MiniLM tokenizer are loaded by `factlab.runtime`.
"""
