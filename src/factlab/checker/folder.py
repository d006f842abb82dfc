"""The checker folder: the trained aligner's weights with everything needed to use them as the pipeline does.

    results/checker/model/
      model.safetensors, aligner.json, encoder/   the alignment model (as results/models/aligner/)
      checker.json                                 how to read it: chunk size, chunk policy, support head,
                                                   aggregation and chunks scored per output sentence
                                                   (AlignScore's tuning), the sentence splitter, the
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
# What a user waits for a checker of their own on 2 CPU cores with native bf16, mostly the aligner's training and
# AlignScore's tuning (paper/tables/pipeline_cost.md; README, "A checker without the whole run").
CHECKER_BUILD_TIME = "about 1 h 20 min on 2 CPU cores"
FULL_RUN_TIME = "about 3 h"
DEFAULT_CHECKER = Path("results/checker/model")
# checker.json's fields that the model card's table leaves out: the card says them in words.
CARD_TABLE_LEFT_OUT = ("validation", "toy", "toy_reason", "calibration")
CARD_TABLE_HEADING = "## How it reads the model"
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
    top_chunks: int = 0  # chunks scored per output sentence, the lexical pre-ranker's best; 0 (cards without it): all
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
    # [low, high): a score in it gets the verdict `uncertain` (consistent: null); None: every score gets a verdict
    uncertain_band: list[float] | None = None
    # The support an edit must give its sentence to be applied (at least the threshold): chosen on validation so that at
    # most a stated share of each kind's consistent outputs is rewritten; None (cards without it): the threshold
    correction_bar: float | None = None
    correction_bar_source: str = "the decision threshold (no correction bar recorded with this model)"
    calibration: dict[str, Any] | None = None  # what `factlab calibrate` chose the decisions on (None: not calibrated)
    entailment_label: str = "entailment"
    validation: dict[str, Any] = field(default_factory=dict)
    # A toy: weights trained to exercise the pipeline (the smoke configuration), whose scores mean nothing; the
    # reason says why (`factlab checker package` decides). Cards without these fields are not toys.
    toy: bool = False
    toy_reason: str | None = None
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

    @property
    def edit_bar(self) -> float:
        """The support a correction's edit must give its sentence: the recorded correction bar, never below the
        decision threshold (a calibrated folder may raise the threshold past it)."""
        return self.threshold if self.correction_bar is None else max(self.threshold, self.correction_bar)


def resolve_model(model: str | Path | None, *, option: str = "model=") -> tuple[str, CheckerSettings]:
    """The model to load and how to read it.

    `model`: a checker folder (has checker.json), a trained aligner folder (aligner.json; AlignScore's default
    reading), or a hub id / folder of an NLI classifier (online, or a local copy). None: `results/checker/model`
    under the working directory; without one, a one-line error saying how to get one. Errors name the model the way
    the caller took it: `option` is "model=" (Python's keyword, the default) or a command's option ("--model")."""
    keyword = option.endswith("=")
    if model is None:
        folder = DEFAULT_CHECKER
        if not (folder / CARD_FILE).is_file():
            choices = "<checker folder | hub NLI model id>"
            raise FactlabError(
                f"no trained checker at {folder}/ (run from the project folder): build it with `make checker` "
                f"(the checker alone: {CHECKER_BUILD_TIME}) or `make run` (the whole pipeline: {FULL_RUN_TIME}), "
                f"pull a team's with `dvc pull` where it shares artefacts over DVC, or pass {option}"
                f"{choices if keyword else ' ' + choices}"
            )
        return str(folder), CheckerSettings.from_json(folder / CARD_FILE)
    given = f"{option}{str(model)!r}" if keyword else f"{option} {model}"
    path = Path(model)
    if (path / CARD_FILE).is_file():
        return str(path), CheckerSettings.from_json(path / CARD_FILE)
    if path.exists() and not path.is_dir():
        raise FactlabError(f"{given}: a file, not a checker folder, aligner folder or model folder")
    if path.is_dir() and not (path / ALIGNER_CONFIG).is_file() and not (path / "config.json").is_file():
        raise FactlabError(f"{given}: the folder holds no checker.json, aligner.json or config.json")
    return str(model), CheckerSettings()


def card_table_rows(settings: CheckerSettings) -> list[str]:
    """The rows of the model card's table "How it reads the model": checker.json's fields as `| key | value |`."""
    return [f"| {key} | {value} |" for key, value in settings.as_json().items() if key not in CARD_TABLE_LEFT_OUT]


def with_card_table(card: str, settings: CheckerSettings) -> str:
    """A model card (README.md) whose table "How it reads the model" reads `settings`: each row of a field it shows
    written again in its place; the rest of the card, its other tables included, is kept."""
    rows = {row.split(" | ", 1)[0]: row for row in card_table_rows(settings)}
    lines, inside = card.split("\n"), False
    for index, line in enumerate(lines):
        if line.startswith("## "):
            inside = line.startswith(CARD_TABLE_HEADING)
        elif inside and line.startswith("| "):
            lines[index] = rows.get(line.split(" | ", 1)[0], line)
    return "\n".join(lines)
