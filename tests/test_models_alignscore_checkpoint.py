"""A released AlignScore checkpoint read by factlab (factlab.models.alignscore_checkpoint), without Lightning.

The checkpoint is made here as AlignScore's training saves it: a Lightning-style mapping whose
`state_dict` is `BERTAlignModel`'s (backbone with pooler under `base_model.`, MLM head, three linear
heads) and whose `hyper_parameters` is a dict subclass standing for Lightning's AttributeDict. The
backbone is a 1-layer BERT built from a config with the packaged MiniLM tokenizer. Scores are checked
against a transcription of AlignScore's `Inferencer.inference` (each pair alone, padded to the
tokenizer's maximum, `truncation="only_first"`, softmax of `tri_layer(pooler_output)`, column 0), on
real WiCE claims and evidence.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from tiny_aligner import tiny_bert_config
from torch import nn
from transformers import BertConfig, BertForPreTraining, BertModel

from factlab.errors import FactlabError
from factlab.models.alignscore_checkpoint import AlignScoreCheckpointScorer
from factlab.models.engine import EngineSettings, score_pair_distributions, score_pairs
from factlab.models.loading import load_pair_scorer
from factlab.runtime import load_tokenizer

FIXTURES = Path(__file__).parent / "fixtures"


class AttributeDict(dict):
    """What Lightning pickles the hyper-parameters as (a class factlab's reader must not need)."""


class BERTAlignModel(nn.Module):
    """AlignScore's module layout (alignscore/model.py), for its state_dict's key names."""

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.base_model = BertModel(config)
        self.mlm_head = BertForPreTraining(config).cls.predictions
        self.bin_layer = nn.Linear(config.hidden_size, 2)
        self.tri_layer = nn.Linear(config.hidden_size, 3)
        self.reg_layer = nn.Linear(config.hidden_size, 1)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BERTAlignModel]:
    folder = tmp_path_factory.mktemp("alignscore")
    tokenizer = load_tokenizer()
    config = tiny_bert_config(initializer_range=0.1)
    config.save_pretrained(folder / "backbone")
    tokenizer.save_pretrained(folder / "backbone")
    torch.manual_seed(3)
    model = BERTAlignModel(config).eval()
    with torch.no_grad():  # a spread of scores across the pairs, so that the comparison below can fail
        model.tri_layer.weight.normal_(0.0, 2.0)
    content = {
        "epoch": 2,
        "global_step": 10,
        "pytorch-lightning_version": "1.7.7",
        "state_dict": model.state_dict(),
        "hparams_name": "kwargs",
        "hyper_parameters": AttributeDict(model=str(folder / "backbone"), using_pretrained=True),
    }
    torch.save(content, folder / "AlignScore-tiny.ckpt")
    return folder / "AlignScore-tiny.ckpt", model


@pytest.fixture(scope="module")
def pairs() -> list[tuple[str, str]]:
    wice = pd.read_json(FIXTURES / "wice_claims_sample.jsonl", lines=True, dtype={"supporting_sentences": str})
    return [(source[:600], claim) for source, claim in zip(wice["source"], wice["output"], strict=True)]


def alignscore_reference(model: BERTAlignModel, tokenizer: object, pairs: list[tuple[str, str]]) -> list[list[float]]:
    rows = []
    for premise, hypothesis in pairs:
        batch = tokenizer(  # type: ignore[operator]
            [premise], [hypothesis], truncation="only_first", padding="max_length",
            max_length=tokenizer.model_max_length, return_tensors="pt",  # type: ignore[attr-defined]
        )  # fmt: skip
        with torch.no_grad():
            output = model.base_model(**batch)
            rows.append(torch.softmax(model.tri_layer(output.pooler_output), -1)[0].tolist())
    return rows


def test_checkpoint_scores_equal_alignscores_inference(checkpoint, pairs) -> None:
    path, model = checkpoint
    scorer = load_pair_scorer(str(path), device="cpu")
    assert isinstance(scorer, AlignScoreCheckpointScorer)
    assert scorer.max_length == 512 and scorer.identity.startswith("alignscore_ckpt:")
    assert scorer.ignored_keys > 0  # the MLM head and the binary and regression heads are read, not used
    reference = alignscore_reference(model, scorer.tokenizer, pairs)
    scores = score_pairs(scorer, pairs, EngineSettings(progress=False)).scores
    assert scores.tolist() == pytest.approx([row[0] for row in reference], abs=1e-5)
    distributions = score_pair_distributions(scorer, pairs, EngineSettings(progress=False)).probabilities
    assert np.abs(distributions - np.array(reference)).max() <= 1e-5
    assert np.ptp([row[0] for row in reference]) > 0.01  # the pairs get different scores: the comparison can fail


def test_a_long_premise_is_cut_and_counted_as_alignscore_cuts_it(checkpoint, pairs) -> None:
    path, model = checkpoint
    scorer = load_pair_scorer(str(path), device="cpu")
    premise = " ".join(source for source, _ in pairs) * 3
    result = score_pairs(scorer, [(premise, pairs[0][1])], EngineSettings(progress=False))
    assert result.premise_cut[0] > 0  # counted, as every cut is
    assert result.scores[0] == pytest.approx(
        alignscore_reference(model, scorer.tokenizer, [(premise, pairs[0][1])])[0][0], abs=1e-5
    )


def test_a_file_that_is_not_an_alignscore_checkpoint_is_one_clear_error(tmp_path) -> None:
    path = tmp_path / "other.ckpt"
    torch.save({"state_dict": {"encoder.weight": torch.zeros(2)}}, path)
    with pytest.raises(FactlabError, match="not an AlignScore checkpoint"):
        load_pair_scorer(str(path), device="cpu")
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(FactlabError, match="cannot read AlignScore checkpoint"):
        load_pair_scorer(str(path), device="cpu")


def test_nothing_in_the_checkpoint_is_executed(tmp_path) -> None:
    class Payload:
        def __reduce__(self):  # what a malicious pickle does: call a function on load
            return (Path.touch, (tmp_path / "pwned",))

    path = tmp_path / "evil.ckpt"
    torch.save({"state_dict": {}, "hyper_parameters": Payload()}, path)
    with pytest.raises(FactlabError):
        load_pair_scorer(str(path), device="cpu")
    assert not (tmp_path / "pwned").exists()
