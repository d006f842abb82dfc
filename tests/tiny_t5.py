"""A tiny random T5 and its tokenizer, built from a config (no download): the hub QASem parser's model
I/O in tests (test_qasem_hub.py) and in CI's DAG run with `qasem.parser: hub` (make smoke-matrix).

    python tests/tiny_t5.py OUT_DIR SENTENCES.parquet …   # vocabulary from the sentences' words
"""

from __future__ import annotations

import argparse
import string
from pathlib import Path

import pandas as pd
import torch
from transformers import T5Config, T5ForConditionalGeneration, T5Tokenizer

N_EXTRA_IDS = 16  # covers every marker of both formats (<extra_id_0> … <extra_id_12>)


def build_tiny_t5(folder: str | Path, sentences: list[list[str]], extra_ids: int = N_EXTRA_IDS) -> None:
    """A T5 tokenizer (unigram over real words plus single characters) and a random 1-layer T5."""
    chars = sorted(set(string.ascii_letters + string.digits + string.punctuation))
    words = sorted({token for tokens in sentences for token in tokens} | {"Generate", "QA", "pairs:"})
    vocab = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("▁", -2.0)]
    vocab += [(char, -5.0) for char in chars] + [("▁" + char, -5.0) for char in chars]
    vocab += [("▁" + word, -1.0) for word in words if len(word) > 1]
    vocab += [(f"<extra_id_{i}>", 0.0) for i in reversed(range(extra_ids))]
    tokenizer = T5Tokenizer(vocab=vocab, extra_ids=extra_ids)
    config = T5Config(
        vocab_size=len(tokenizer), d_model=32, d_kv=16, num_layers=1, num_decoder_layers=1, num_heads=2, d_ff=64,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )  # fmt: skip
    torch.manual_seed(0)
    T5ForConditionalGeneration(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("sentences", nargs="+", help="sentences.parquet files (column `text`)")
    args = parser.parse_args()
    texts = pd.concat([pd.read_parquet(path, columns=["text"]) for path in args.sentences])["text"]
    build_tiny_t5(args.out_dir, [text.split() for text in texts])


if __name__ == "__main__":
    main()
