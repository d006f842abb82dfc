"""`factlab export CHECKER OUT`: a checker folder as a folder plain `transformers` loads.

    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline
    model = AutoModelForSequenceClassification.from_pretrained(OUT, trust_remote_code=True)
    tokenizer = AutoTokenizer.from_pretrained(OUT)                 # a standard tokenizer: no remote code
    classify = pipeline("text-classification", model=OUT, trust_remote_code=True, top_k=None)
    classify({"text": premise, "text_pair": hypothesis})   # entailment, neutral, contradiction

The model is the aligner's encoder with its 3-way head (factlab.checker.hf_modeling, copied in as
`modeling_factlab.py`): the same probabilities as factlab's engine for a pair that fits `max_length` word pieces.
Only the model class is remote code: `config.json` is the encoder's own configuration (its model type, so AutoConfig
and AutoTokenizer read it without remote code, and never ask), with the head's labels and the `auto_map` entry of the
model class. factlab's chunking and sentence aggregation are not part of it: `factlab check` applies them.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from factlab.checker.folder import CARD_FILE
from factlab.errors import FactlabError
from factlab.io import atomic_folder

LABELS = ("entailment", "neutral", "contradiction")  # the 3-way head's order (factlab.models.aligner)
MODELING_FILE = "modeling_factlab.py"


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    parser.add_argument("checker", help="a checker folder (results/checker/model)")
    parser.add_argument("out", help="the folder to write")
    parser.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> None:
    from safetensors.torch import load_file, save_file

    from factlab.checker import hf_modeling

    checker, out = Path(args.checker), Path(args.out)
    needed = ["model.safetensors", "aligner.json", "encoder/config.json"]
    missing = [name for name in needed if not (checker / name).exists()]
    if missing:
        raise FactlabError(f"{checker} is not a checker folder: it lacks {missing}")
    aligner = json.loads((checker / "aligner.json").read_text())["aligner"]
    encoder = json.loads((checker / "encoder" / "config.json").read_text())
    state = load_file(str(checker / "model.safetensors"))
    kept = {name: tensor for name, tensor in state.items() if name.startswith(("encoder.", "three_way."))}
    config = {
        **encoder,
        "architectures": ["FactlabAlignerForSequenceClassification"],
        "auto_map": {"AutoModelForSequenceClassification": f"{MODELING_FILE[:-3]}.FactlabAlignerForSequenceClassification"},
        "id2label": dict(enumerate(LABELS)),
        "label2id": {label: index for index, label in enumerate(LABELS)},
        "max_length": aligner.get("max_length", 512),
    }
    with atomic_folder(out) as staging:
        save_file(kept, str(staging / "model.safetensors"), metadata={"format": "pt"})
        (staging / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
        shutil.copy2(hf_modeling.__file__, staging / MODELING_FILE)
        for item in (checker / "encoder").iterdir():
            if item.name != "config.json":
                shutil.copy2(item, staging / item.name)
        tokenizer_config = staging / "tokenizer_config.json"
        if tokenizer_config.is_file():  # pairs longer than the model's positions are cut, as factlab's engine cuts
            settings = json.loads(tokenizer_config.read_text())
            settings["model_max_length"] = config["max_length"]
            tokenizer_config.write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n")
        for name in (CARD_FILE, "README.md"):
            if (checker / name).is_file():
                shutil.copy2(checker / name, staging / name)
    print(f"factlab export: {out} (load with trust_remote_code=True)")
