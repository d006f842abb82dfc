"""The checker folder: the trained aligner's weights with everything needed to use them as the pipeline does.

    results/checker/model/
      model.safetensors, aligner.json, encoder/   the alignment model (as results/models/aligner/)
      checker.json                                 how to read it: chunk size, chunk policy, support head and
                                                   aggregation (AlignScore's tuning), the sentence splitter, the
                                                   engine's batching and precision, and the decision threshold
                                                   chosen on validation data
      README.md                                    the model card

`factlab check` and `factlab.Checker` load it; `resolve_model` finds it or says how to get one.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from factlab.errors import FactlabError

CARD_FILE = "checker.json"
DEFAULT_CHECKER = Path("results/checker/model")
FORMAT_VERSION = 1
ALIGNER_CONFIG = "aligner.json"  # a trained aligner folder (factlab.models.aligner.CONFIG_FILE)


@dataclass(frozen=True)
class CheckerSettings:
    """How a checker reads its model; the defaults are AlignScore's published ones (a hub model, an aligner
    folder without a card)."""

    method: str = "alignscore"
    words_per_chunk: int = 350
    chunk_policy: str = "reference"
    aggregation: str = "mean"
    support_head: str = "three_way"
    sentence_splitter: str = "pysbd"
    token_budget: int = 16384
    max_batch_pairs: int = 256
    precision: str = "auto"
    threshold: float = 0.5
    threshold_source: str = "default 0.5 (no validation threshold recorded with this model)"
    token_threshold: float = 0.5  # a word is marked unsupported iff its P(unsupported) > this (aligners with a token head)
    token_threshold_source: str = "default 0.5 (no validation threshold recorded with this model)"
    # The token localiser's weights (factlab.models.token_localiser), fit on validation tokens; None: the head alone.
    token_localiser: dict[str, Any] | None = None
    entailment_label: str = "entailment"
    validation: dict[str, Any] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION

    @classmethod
    def from_json(cls, path: Path) -> CheckerSettings:
        try:
            values = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as error:
            raise FactlabError(f"{path}: cannot read the checker card ({error})") from error
        known = {item.name for item in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise FactlabError(f"{path}: unknown field(s) {unknown} (written by a newer factlab?)")
        return cls(**values)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def resolve_model(model: str | Path | None) -> tuple[str, CheckerSettings]:
    """The model to load and how to read it.

    `model`: a checker folder (has checker.json), a trained aligner folder (aligner.json; AlignScore's default
    reading), or a hub id / folder of an NLI classifier (online, or a local copy). None: `results/checker/model`
    under the working directory; without one, a one-line error saying how to get one."""
    if model is None:
        folder = DEFAULT_CHECKER
        if not (folder / CARD_FILE).is_file():
            raise FactlabError(
                f"no trained checker at {folder}/ (run from the project folder): build it with `make run` "
                "(or `snakemake --cores all package_checker`), fetch the team's with `make pull`, "
                "or pass --model <checker folder | hub NLI model id>"
            )
        return str(folder), CheckerSettings.from_json(folder / CARD_FILE)
    path = Path(model)
    if (path / CARD_FILE).is_file():
        return str(path), CheckerSettings.from_json(path / CARD_FILE)
    if path.exists() and not path.is_dir():
        raise FactlabError(f"--model {model}: a file, not a checker folder, aligner folder or model folder")
    if path.is_dir() and not (path / ALIGNER_CONFIG).is_file() and not (path / "config.json").is_file():
        raise FactlabError(f"--model {model}: the folder holds no checker.json, aligner.json or config.json")
    return str(model), CheckerSettings()
