"""A tiny random NLI cross-encoder (one 32-wide BERT layer over the packaged MiniLM tokenizer, labels
entailment/neutral/contradiction), built from a config (no download): a user's `model:` scorer
(scorers.custom) in tests and in CI's DAG run (make smoke-matrix). Tests the model I/O, not quality.

    python tests/tiny_nli.py OUT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from tiny_aligner import tiny_bert_config
from transformers import BertForSequenceClassification

from factlab.runtime import load_tokenizer

LABELS = ("entailment", "neutral", "contradiction")


def build_tiny_nli(folder: str | Path, seed: int = 0) -> Path:
    torch.manual_seed(seed)
    config = tiny_bert_config(
        num_labels=len(LABELS),
        id2label=dict(enumerate(LABELS)),
        label2id={label: index for index, label in enumerate(LABELS)},
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    load_tokenizer().save_pretrained(folder)
    return Path(folder)


if __name__ == "__main__":
    build_tiny_nli(sys.argv[1])
