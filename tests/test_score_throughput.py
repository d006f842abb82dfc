"""`factlab score throughput`: the engine against AlignScore's reference loop on real pairs, with a cut length
(`--max-length`, how the GPU check measures 256-piece pairs) and a reference loop timed on the first pairs only."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tiny_aligner import tiny_aligner

from factlab.cli import main
from factlab.io import write_parquet
from factlab.models.aligner import save_aligner
from factlab.preprocess.benchmark import sentence_units
from factlab.score.alignscore import AlignScoreSettings
from factlab.score.throughput_command import sample_pairs

FIXTURES = Path(__file__).parent / "fixtures"


def test_cut_length_and_reference_sample_are_reported(tmp_path: Path) -> None:
    frame = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv")  # six real QAGS-XSum articles and summaries
    examples = pd.DataFrame(
        {"example_id": frame["id"], "doc_id": frame["id"], "source": frame["document"], "output": frame["summary"]}
    )
    sentences, _ = sentence_units(examples, "qags_xsum")
    write_parquet(examples, tmp_path / "qags_xsum.parquet")
    write_parquet(sentences, tmp_path / "sentences.parquet")
    choice = {"words_per_chunk": 60, "aggregation": "mean", "support_head": "three_way", "chunk_policy": "reference"}
    (tmp_path / "choice.json").write_text(json.dumps(choice))
    scorer = tiny_aligner(3)
    save_aligner(scorer.network, scorer.tokenizer, tmp_path / "aligner", {})
    out = tmp_path / "throughput.json"
    main(
        ["score", "throughput", "--data", str(tmp_path / "qags_xsum.parquet"), "--sentences", str(tmp_path / "sentences.parquet"),
         "--model", str(tmp_path / "aligner"), "--entailment-label", "entailment", "--pairs-per-benchmark", "12",
         "--choice", str(tmp_path / "choice.json"), "--chunk-policy", "reference", "--token-budget", "4096",
         "--max-batch-pairs", "8", "--precision", "fp32", "--threads", "1", "--device", "cpu",
         "--max-length", "64", "--reference-pairs", "3", "--out", str(out), "--scores-out", str(tmp_path / "scores.parquet")]
    )  # fmt: skip
    report = json.loads(out.read_text())
    pairs = list(dict.fromkeys(sample_pairs([str(tmp_path / "qags_xsum.parquet")], [str(tmp_path / "sentences.parquet")], 12,
                                            AlignScoreSettings(60, "reference", "mean", "three_way"))))  # fmt: skip
    # the tokenizer's own pair encoding, cut to 64 pieces from the premise: the independent reference
    full = [len(scorer.tokenizer(p, h)["input_ids"]) for p, h in pairs]
    cut = [len(scorer.tokenizer(p, h, truncation="only_first", max_length=64)["input_ids"]) for p, h in pairs]
    assert report["pairs"] == len(pairs) == 12
    assert (report["max_length"], report["reference_pairs"], report["reference_padded_tokens"]) == (64, 3, 3 * 64)
    assert report["pairs_premise_cut"] == sum(length > 64 for length in full) > 0
    assert report["mean_pair_tokens"] == np.mean(cut)
    assert report["engine_tokens"] == sum(cut)
    # each pair alone, unpadded, through the network's three-way head: neither the engine's packing nor the padded loop
    with torch.inference_mode():
        alone = [torch.softmax(scorer.network(**scorer.tokenizer(p, h, truncation="only_first", max_length=64,
                                                                 return_tensors="pt"))["three_way"], -1)[0, 0].item()
                 for p, h in pairs]  # fmt: skip
    scores = pd.read_parquet(tmp_path / "scores.parquet")
    assert list(zip(scores["premise"], scores["hypothesis"], strict=True)) == pairs
    np.testing.assert_allclose(scores["engine"], alone, atol=1e-5)  # fp32 on every path, the same weights and cut
    np.testing.assert_allclose(scores["reference"][:3], alone[:3], atol=1e-5)
    assert scores["reference"][3:].isna().all()
    assert report["max_abs_diff"] == np.max(np.abs(scores["engine"][:3] - scores["reference"][:3])) < 1e-5
