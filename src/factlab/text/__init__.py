"""The text units every stage uses: sentences, chunks and words.

- `sentences`: `split_sentences` (pysbd or spaCy) -> `Sentence(text, start, end)`, offsets into the original text.
- `chunking`: AlignScore word chunks, SCALE token windows, greedy sentence packing, each with a `ChunkReport`
  counting every cut; scorers cut each source when they score it, with their own settings.
- `words`: what a word is, once for each use (chunk budgets, n-gram overlap, marked spans, ...).

The preprocess stage writes sentences to disk; scorers, training and the checker call the same functions at run
time, so a unit means the same thing wherever it is read.
"""
