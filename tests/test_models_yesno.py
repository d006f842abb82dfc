"""hf_yesno: SCALE's yes/no question to a seq2seq model, against a transcription of SCALE's own loop
(asappresearch/scale-score, `scale_score/utils.py`: the prompt string tokenised whole, or a window's
tokens then the prompt's remainder; `generate(max_new_tokens=1, output_scores=True)`; softmax over the
first pieces of "Yes" and "No"), on a tiny random T5 built here from a config and real WiCE claims."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from tiny_t5 import build_tiny_t5

from factlab.errors import FactlabError
from factlab.models.engine import EngineSettings, score_pair_distributions, score_pairs
from factlab.models.loading import load_pair_scorer
from factlab.models.yesno import PROMPT_BEFORE_HYPOTHESIS, HubYesNoScorer, prompt
from factlab.preprocess.benchmark import sentence_units
from factlab.score.scale import ScaleSettings, from_mapping, scale_pairs, score_scale

FIXTURES = Path(__file__).parent / "fixtures"
ENGINE = EngineSettings(progress=False, token_budget=4096)
RETRIEVAL = {"branches": 2, "split": "reference", "group_premise": "whole", "ks": [1], "splits": ["test"], "max_claims": 0}


@pytest.fixture(scope="module")
def wice() -> pd.DataFrame:
    """Four real WiCE test claims with their evidence pages."""
    return pd.read_json(FIXTURES / "wice_claims_sample.jsonl", lines=True, dtype={"supporting_sentences": str})


@pytest.fixture(scope="module")
def tiny_t5(tmp_path_factory: pytest.TempPathFactory, wice: pd.DataFrame) -> Path:
    folder = tmp_path_factory.mktemp("tiny_t5")
    texts = list(wice["source"]) + list(wice["output"]) + [prompt("", "")]
    build_tiny_t5(folder, [text.split() for text in texts])
    return folder


@pytest.fixture(scope="module")
def scorer(tiny_t5: Path) -> HubYesNoScorer:
    loaded = load_pair_scorer(str(tiny_t5), device="cpu")
    assert isinstance(loaded, HubYesNoScorer)  # an encoder-decoder config is read as a yes/no model
    return loaded


def scale_yes_probability(scorer: HubYesNoScorer, input_ids: list[int]) -> float:
    """SCALE's `run_model_chunks` for one chunk, transcribed."""
    tokenizer, model = scorer.tokenizer, scorer.model
    yes_no_tokens = [tokenizer("Yes").input_ids[0], tokenizer("No").input_ids[0]]
    with torch.inference_mode():
        outputs = model.generate(
            torch.tensor([input_ids]), output_scores=True, return_dict_in_generate=True, max_new_tokens=1, do_sample=False
        )
    scores = outputs["scores"][0][0][yes_no_tokens]
    return float(torch.nn.functional.softmax(scores, dim=0)[0])


def real_pairs(wice: pd.DataFrame) -> list[tuple[str, str]]:
    """Each claim against the start of its own page and of another page (short premises: nothing cut)."""
    sources = [source[:300] for source in wice["source"]]
    claims = list(wice["output"])
    return [(sources[i], claims[i]) for i in range(len(claims))] + [(sources[i - 1], claims[i]) for i in range(len(claims))]


def test_support_is_scales_yes_probability_of_the_whole_prompt(scorer: HubYesNoScorer, wice: pd.DataFrame) -> None:
    pairs = real_pairs(wice)
    result = score_pairs(scorer, pairs, ENGINE)
    assert result.counts["pairs_premise_cut"] == 0 and result.counts["batches"] >= 1
    # SCALE, premise shorter than a chunk: the filled prompt tokenised as one string
    expected = [scale_yes_probability(scorer, scorer.tokenizer(prompt(p, h)).input_ids) for p, h in pairs]
    np.testing.assert_allclose(result.scores, expected, atol=1e-5)
    assert len(set(np.round(result.scores, 6))) > 1  # a random model still tells pairs apart


def test_long_premise_is_cut_where_scale_cuts_its_first_window(tiny_t5: Path, wice: pd.DataFrame) -> None:
    premise, claim = wice["source"].iloc[0], wice["output"].iloc[0]
    short = HubYesNoScorer(str(tiny_t5), device="cpu", max_length=96)
    result = score_pairs(short, [(premise, claim)], ENGINE)
    # SCALE's get_chunks: the premise's tokens, then the tokens of the prompt's remainder (with </s>)
    post = short.tokenizer(prompt("", claim)).input_ids
    premise_ids = short.tokenizer(premise, add_special_tokens=False).input_ids
    room = 96 - len(post)
    assert result.premise_cut[0] == len(premise_ids) - room > 0 and result.counts["pairs_premise_cut"] == 1
    assert result.scores[0] == pytest.approx(scale_yes_probability(short, premise_ids[:room] + post), abs=1e-5)


def test_scale_windows_leave_room_for_the_prompt(scorer: HubYesNoScorer, wice: pd.DataFrame) -> None:
    """SCALE with the yes/no model: every (window, sentence) prompt fits chunk_size, as the tokenizer counts it whole."""
    params = {"chunk_size": 128, "overlap": 0.25, "window_policy": "covering", "aggregation": "mean", "retrieval": RETRIEVAL}
    settings = from_mapping(ScaleSettings, params, "score.scale")
    examples = wice.head(2)
    sentences, _ = sentence_units(examples, "fixture")
    job = scale_pairs(examples, sentences, scorer, settings)
    lengths = [len(scorer.tokenizer(prompt(window, sentence)).input_ids) for window, sentence in job.pairs]
    assert len(job.pairs) > 4 and max(lengths) <= 128
    assert max(lengths) >= 128 - 8  # windows are filled, not sized for the bare sentence
    scores, counts = score_scale(examples, sentences, scorer, settings, ENGINE)
    assert counts["pairs_premise_cut"] == 0
    values = [scale_yes_probability(scorer, scorer.tokenizer(prompt(w, s)).input_ids) for w, s in job.pairs]
    best: dict[tuple[int, int], float] = {}
    for (row, sentence, _), value in zip(job.owners, values, strict=True):
        best[(row, sentence)] = max(best.get((row, sentence), -1.0), value)
    for row, score in enumerate(scores["score"]):
        per_sentence = [value for (r, _), value in best.items() if r == row]
        assert score == pytest.approx(np.mean(per_sentence), abs=1e-5)


def test_yes_no_model_gives_no_distribution(scorer: HubYesNoScorer, wice: pd.DataFrame) -> None:
    with pytest.raises(FactlabError, match="support only"):
        score_pair_distributions(scorer, real_pairs(wice)[:1], ENGINE)


def test_prompt_is_scales() -> None:
    assert prompt("P.", "H") == 'P. Question: Does this imply that "H"? Yes or no?'
    assert PROMPT_BEFORE_HYPOTHESIS.startswith(" Question:")
