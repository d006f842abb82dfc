"""The aligner's validation points are a curve beside training, not part of it: how often it validates
(`aligner.train.validate_every`, a cost) leaves the trained weights bit for bit the same."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import torch
from test_train_precision import TINY_ALIGNER, mixture  # noqa: F401 (the fixture: 48 real SICK pairs)

from factlab.train.aligner import train_aligner


def test_validation_points_leave_the_weights_unchanged(mixture: pd.DataFrame) -> None:  # noqa: F811
    def trained(validate_every: int) -> tuple[dict[str, torch.Tensor], dict]:
        settings = replace(TINY_ALIGNER, epochs=2, validate_every=validate_every)
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
