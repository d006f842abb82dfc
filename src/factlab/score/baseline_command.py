"""`factlab score embedding-cosine | rouge | bertscore-precision | openie-triples`: FRANK-style baselines, one shard.

Each reads its settings from `params.yaml` `score.<scorer>` (as --settings JSON) and writes the
same score table and report as the model-based scorers (`factlab.score.commands`).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict
from typing import Any

from factlab.commands import add_device_arguments, settings_from_json
from factlab.score.commands import add_job_arguments, job_examples, write_job

BASELINES = ("embedding_cosine", "rouge", "bertscore_precision", "openie_triples")


def register(commands: Any) -> None:
    for scorer in BASELINES:
        parser = commands.add_parser(scorer.replace("_", "-"), help=f"{scorer} of every example of a benchmark (one shard)")
        add_job_arguments(parser, model=False)
        parser.add_argument("--settings", required=True, help=f"JSON of score.{scorer}")
        # the model-based ones take a precision, as the engine's (score.engine.precision)
        add_device_arguments(parser, precision=scorer != "rouge")
        if scorer == "bertscore_precision":
            parser.add_argument("--encoder", help="the folder of rule unpack_mpnet (only when the model is mpnet)")
        if scorer == "openie_triples":
            parser.add_argument("--triples", required=True, help="results/preprocess/<benchmark>/triples.parquet")
        parser.set_defaults(func=run_baseline, scorer=scorer)


def run_baseline(args: argparse.Namespace) -> None:
    # Each scorer's module is imported in its branch only: a rouge job never imports torch.
    import pandas as pd

    started = time.perf_counter()
    examples, sampled = job_examples(args)
    sentences = pd.read_parquet(args.sentences)
    if args.scorer == "embedding_cosine":
        from factlab.score import embedding_cosine
        from factlab.score.sentence_encoder import load_sentence_encoder

        settings: Any = settings_from_json(args.settings, embedding_cosine.EmbeddingCosineSettings, "score.embedding_cosine")
        encoder = load_sentence_encoder(args.device, precision=args.precision)
        precision = encoder.precision
        scores, counts = embedding_cosine.score_embedding_cosine(examples, sentences, settings, encoder)
    elif args.scorer == "rouge":
        from factlab.score import rouge

        settings = settings_from_json(args.settings, rouge.RougeSettings, "score.rouge")
        precision = None
        scores, counts = rouge.score_rouge(examples, sentences, settings)
    elif args.scorer == "bertscore_precision":
        from factlab.score import bertscore

        settings = settings_from_json(args.settings, bertscore.BertScoreSettings, "score.bertscore_precision")
        path = bertscore.bertscore_encoder(settings, args.encoder)
        bert = bertscore.load_bertscore(settings, args.device, path, precision=args.precision)
        precision = bert.precision
        scores, counts = bertscore.score_bertscore_precision(examples, sentences, settings, bert=bert)
    else:
        from factlab.score import openie_triples
        from factlab.score.sentence_encoder import load_sentence_encoder

        settings = settings_from_json(args.settings, openie_triples.OpenIETriplesSettings, "score.openie_triples")
        encoder = load_sentence_encoder(args.device, precision=args.precision)
        precision = encoder.precision
        triples = pd.read_parquet(args.triples)
        scores, counts = openie_triples.score_openie_triples(examples, sentences, settings, triples, encoder)
    job = {"device": args.device, "settings": asdict(settings)} | ({"precision": precision} if precision else {})
    write_job(args, args.scorer, scores, {**counts, **sampled}, time.perf_counter() - started, **job)
