"""Seeded samples of a benchmark's examples (`score.sample`): the scoring jobs', OpenIE's triples' and the parser's QAs'.

A module of its own so that the preprocess and score stages share it without either importing the other's code
(each rule's code inputs are its command's import closure).
"""

from __future__ import annotations

import hashlib

import pandas as pd

from factlab.errors import FactlabError


def sample_key(example_id: str, seed: int) -> str:
    """The example's place in every seeded sample: a hash of the seed and its id, stable across machines and versions."""
    return hashlib.sha256(f"{seed}:{example_id}".encode()).hexdigest()


def sample_examples(examples: pd.DataFrame, size: int | None, seed: int | None) -> pd.DataFrame:
    """The `size` examples whose `sample_key` sorts first, in example_id order; all of them when `size` is None or
    covers them. It depends on the example ids alone (not their order, the scorer or the shards), and a larger
    sample keeps a smaller one's examples, so samples of one benchmark nest. A sample needs its seed (the commands'
    `--sample-seed`)."""
    if size is not None and size < 1:
        raise FactlabError(f"a sample needs at least one example, got {size}")
    if size is not None and seed is None:
        raise FactlabError(f"--sample-examples {size} needs --sample-seed")
    kept = examples
    if size is not None and size < len(examples):
        keys = examples["example_id"].map(lambda example_id: sample_key(str(example_id), seed))
        kept = examples.loc[keys.sort_values(kind="stable").index[:size]]
    return kept.sort_values("example_id", kind="stable").reset_index(drop=True)
