"""Where the scoring engine's time goes on one device, stage by stage: cache keys, tokenisation, encoding, padding,
the forward passes alone (bf16 and fp32) and the whole engine, at two token budgets, on the 11,398 distinct
AlignScore pairs of FRANK and SummaC-FactCC at 350-word chunks cut to 256 pieces (MiniLM with fresh heads: the
timings do not depend on the weights). Every stage but the first runs after a warm-up.

    python scripts/profile_engine.py cuda 20000 > benchmarks/gpu/profile_engine.json
"""

import json
import sys
import time

import torch

from factlab.models.aligner import AlignerConfig, AlignerScorer, new_network
from factlab.models.engine import EngineSettings, encode_pairs, length_batches, pad_batch, pair_key, score_pairs, scorer_template
from factlab.score.alignscore import AlignScoreSettings
from factlab.score.throughput_command import sample_pairs

device, per_benchmark = sys.argv[1], int(sys.argv[2])
torch.manual_seed(0)
network, tokenizer = new_network(AlignerConfig(max_length=256))
scorer = AlignerScorer(network, tokenizer, device=device)
names = ["frank", "summac_factcc"]
pairs = list(
    dict.fromkeys(
        sample_pairs(
            [f"results/data/{n}.parquet" for n in names],
            [f"results/preprocess/{n}/sentences.parquet" for n in names],
            per_benchmark,
            AlignScoreSettings(350, "reference", "mean", "three_way"),
        )
    )
)
out = {"pairs": len(pairs), "attention": getattr(network.encoder.config, "_attn_implementation", "?")}
sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)


def timed(name, function):
    sync()
    started = time.perf_counter()
    result = function()
    sync()
    out[name] = round(time.perf_counter() - started, 4)
    return result


score_pairs(scorer, pairs[:64], EngineSettings(65536, 512, "bf16", progress=False))  # warm-up
timed("keys", lambda: [pair_key("x", p, h) for p, h in pairs])
premises = sorted({p for p, _ in pairs})
out["distinct_premises"] = len(premises)
timed("tokenize_premises", lambda: tokenizer(premises, add_special_tokens=False))
encoded = timed("encode_pairs", lambda: encode_pairs(tokenizer, pairs, 256, scorer_template(scorer)))


def profile_budget(budget: int) -> None:
    batches = length_batches(encoded.lengths.tolist(), budget, 4096)
    out[f"batches_{budget}"] = len(batches)
    padded = timed(
        f"pad_{budget}", lambda: [pad_batch(encoded, b, tokenizer.pad_token_id, scorer.device) for b in batches]
    )

    def forward(bf16: bool):
        with torch.inference_mode(), torch.autocast(device, dtype=torch.bfloat16, enabled=bf16):
            return [scorer.support(*x) for x in padded]

    forward(True)
    timed(f"forward_bf16_{budget}", lambda: forward(True))
    timed(f"forward_fp32_{budget}", lambda: forward(False))
    timed(f"engine_bf16_{budget}", lambda: score_pairs(scorer, pairs, EngineSettings(budget, 4096, "bf16", progress=False)))


for budget in (65536, 262144):
    profile_budget(budget)
print(json.dumps(out))
