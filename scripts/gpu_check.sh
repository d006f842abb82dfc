#!/usr/bin/env bash
# The GPU check, on any machine with CUDA and factlab installed (`make gpu-check`):
#   1. the CUDA parity tests (tests/test_cuda.py: bf16 and fp32 on the GPU against fp32 on the CPU);
#   2. the aligner trained with config/gpu.yaml's recipe (merged over params.yaml) on the default mixture;
#   3. the scoring engine's throughput (`factlab score throughput`): real AlignScore pairs at the chunk size the
#      default run scores (60 words, mean), in bf16; and 256-piece pairs (CNN/DM articles' 350-word chunks, AlignScore's
#      default, cut to 256 pieces, every cut counted) in bf16 and fp32.
# Everything lands in OUT (default benchmarks/gpu, committed: CI cannot rebuild it): gpu_check_run.log, the training log
# and curves, one JSON per throughput run. CI never runs this: it has no GPU. Each step runs even if an earlier
# one failed; the exit status is the number of failed steps. It needs no Snakemake (a bare GPU machine may lack
# it), so it merges config/gpu.yaml's two flat sections below by hand instead of the Makefile's MERGE_PARAMS.
set -u
out=${1:-benchmarks/gpu}
python=${PYTHON:-python3}
mixture=${MIXTURE:-results/models/aligner_data/mixture.parquet}
leakage=${LEAKAGE:-results/models/aligner_data/leakage.json}
benchmarks=${BENCHMARKS:-frank summac_factcc true_paws}
long_benchmarks=${LONG_BENCHMARKS:-frank summac_factcc} # long sources: nearly every 350-word chunk fills 256 pieces
pairs=${PAIRS_PER_BENCHMARK:-20000}     # the first N distinct pairs of each benchmark
reference_pairs=${REFERENCE_PAIRS:-1000} # AlignScore's one-pair-at-a-time loop is timed on the first N only
train_seconds=${TRAIN_TIMEOUT:-300}
device=${DEVICE:-cuda}
threads=${THREADS:-8} # CPU threads for tokenising and batching beside the GPU
work=$(mktemp -d)
mkdir -p "$out"
log="$out/gpu_check_run.log"
: >"$log"
failed=0
step() { # step NAME COMMAND...: run, log, count a failure
    local name=$1 started=$SECONDS
    shift
    echo "== $name: $*" >>"$log"
    "$@" >>"$log" 2>&1
    local status=$?
    echo "== $name: exit $status after $((SECONDS - started)) s" >>"$log"
    [ "$status" -eq 0 ] || failed=$((failed + 1))
}

step machine "$python" -c "import platform, torch, transformers
print(platform.python_version(), 'torch', torch.__version__, 'transformers', transformers.__version__)
print('cuda', torch.version.cuda, torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no GPU', 'cpus', __import__('os').cpu_count())"
step nvidia-smi nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
step tests timeout 150 "$python" -m pytest -q -p no:cacheprovider -p no:randomly tests/test_cuda.py tests/test_score_engine_precision.py

engine=$("$python" -c "import yaml
engine = yaml.safe_load(open('config/gpu.yaml'))['score']['engine']
print(engine['token_budget'], engine['max_batch_pairs'])")
read -r token_budget max_batch_pairs <<<"$engine"
settings=$("$python" -c "import json, yaml
train = yaml.safe_load(open('params.yaml'))['aligner']['train']
train.update(yaml.safe_load(open('config/gpu.yaml'))['aligner']['train'])
print(json.dumps(train, sort_keys=True))")
train_precision=$("$python" -c "import yaml; print(yaml.safe_load(open('config/gpu.yaml'))['aligner']['precision'])")
step train-aligner timeout "$train_seconds" "$python" -m factlab train aligner --mixture "$mixture" --leakage-report "$leakage" \
    --settings "$settings" --threads "$threads" --device "$device" --precision "$train_precision" --out-dir "$work/aligner"
for file in training_log.json curves.csv; do
    [ -f "$work/aligner/$file" ] && cp "$work/aligner/$file" "$out/aligner_$file"
done
model="$work/aligner"
if [ ! -f "$model/aligner.json" ]; then # training did not finish: MiniLM with fresh heads (speed does not depend on the weights)
    model="$work/initial_aligner"
    step initial-aligner "$python" -c "from factlab.models.aligner import AlignerConfig, new_network, save_aligner
network, tokenizer = new_network(AlignerConfig())
save_aligner(network, tokenizer, '$model', {'note': 'initial weights: MiniLM and untrained heads'})"
fi

throughput() { # throughput NAME WORDS_PER_CHUNK PRECISION MAX_LENGTH BENCHMARK...
    local name=$1 words=$2 precision=$3 max_length=$4 data=() sentences=()
    shift 4
    for benchmark in "$@"; do
        data+=("results/data/$benchmark.parquet")
        sentences+=("results/preprocess/$benchmark/sentences.parquet")
    done
    echo "{\"words_per_chunk\": $words, \"aggregation\": \"mean\", \"support_head\": \"three_way\"}" >"$work/choice_$name.json"
    step "throughput-$name" "$python" -m factlab score throughput --data "${data[@]}" --sentences "${sentences[@]}" \
        --model "$model" --entailment-label entailment --pairs-per-benchmark "$pairs" --reference-pairs "$reference_pairs" \
        --choice "$work/choice_$name.json" --chunk-policy reference --token-budget "$token_budget" --max-batch-pairs "$max_batch_pairs" \
        --precision "$precision" --threads "$threads" --device "$device" --max-length "$max_length" --out "$out/throughput_$name.json"
}
# shellcheck disable=SC2086 # the benchmark lists split into words
throughput scored_bf16 60 bf16 512 $benchmarks
# shellcheck disable=SC2086
throughput 256_bf16 350 bf16 256 $long_benchmarks
# shellcheck disable=SC2086
throughput 256_fp32 350 fp32 256 $long_benchmarks
rm -rf "$work"
echo "== $failed failed step(s)" >>"$log"
exit "$failed"
