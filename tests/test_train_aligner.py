"""The aligner's validation points are a curve beside training, not part of it: how often it validates
(`aligner.train.validate_every`, a cost) leaves the trained weights bit for bit the same."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from factlab.data.registry import get_spec
from factlab.train.aligner import AlignerTrainSettings, train_aligner
from factlab.train.mixture import corpus_pairs


@pytest.fixture(scope="module")
def mixture(raw) -> pd.DataFrame:
    """48 real SICK pairs (3-way labels and relatedness: all three heads train), the first 16 for validation."""
    pairs = corpus_pairs("nli_sick", get_spec("nli_sick").build(raw).frame).head(48).reset_index(drop=True)
    return pairs.assign(split=["validation"] * 16 + ["train"] * 32)


def test_validation_points_leave_the_weights_unchanged(mixture: pd.DataFrame) -> None:
    def trained(validate_every: int) -> tuple[dict[str, torch.Tensor], dict]:
        settings = AlignerTrainSettings(
            encoder_layers=1, max_length=96, batch_pairs=8, epochs=2, validate_every=validate_every, seed=4
        )
        network, _, log = train_aligner(mixture, settings, device="cpu", precision="fp32")
        return {name: value.detach().clone() for name, value in network.state_dict().items()}, log

    often, often_log = trained(1)
    rarely, rarely_log = trained(1000)
    # 4 steps an epoch: a point after steps 1-3 and each epoch's end, against the epochs' ends only
    assert [point["step"] for point in often_log["curve"]] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert [point["step"] for point in rarely_log["curve"]] == [4, 8]
    assert often.keys() == rarely.keys()
    assert all(torch.equal(often[name], rarely[name]) for name in often)
    assert often_log["epochs"][-1]["validation_auc"] == rarely_log["epochs"][-1]["validation_auc"]
