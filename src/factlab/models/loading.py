"""Loading any model factlab reads as a pair scorer: the top of factlab.models, importing each adapter
(factlab.models.aligner, alignscore_checkpoint, yesno) while none of them imports it."""

from __future__ import annotations

from pathlib import Path

from factlab.models.aligner import CONFIG_FILE, DeferredAlignerScorer, HubNLIScorer
from factlab.models.alignscore_checkpoint import AlignScoreCheckpointScorer, is_alignscore_checkpoint
from factlab.models.protocols import PairScorer
from factlab.models.yesno import HubYesNoScorer, is_seq2seq


def load_pair_scorer(
    model: str, *, device: str = "auto", entailment_label: str = "entailment", contradiction_label: str = "contradiction"
) -> PairScorer:
    """`model`: a trained aligner folder (has aligner.json), a released AlignScore checkpoint (a `.ckpt`
    file: factlab.models.alignscore_checkpoint), else a hub id / folder of an NLI classifier or of a
    seq2seq model (encoder-decoder config: asked SCALE's yes/no question, factlab.models.yesno).

    The aligner and a classifier are `DistributionScorer`s; `contradiction_label` only matters for a
    classifier's 3-way distribution. A yes/no model gives support only (the engine says so when a
    method asks it for distributions).
    """
    if (Path(model) / CONFIG_FILE).is_file():
        return DeferredAlignerScorer(model, device=device)
    if is_alignscore_checkpoint(model):
        return AlignScoreCheckpointScorer(model, device=device)
    if is_seq2seq(model):
        return HubYesNoScorer(model, device=device)
    return HubNLIScorer(model, entailment_label, device=device, contradiction_label=contradiction_label)
