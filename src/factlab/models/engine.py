"""One inference path for every pair-scoring method (AlignScore, SummaC; SCALE, QASemConsistency next).

A job hands over all its (premise, hypothesis) pairs at once, asking either for the support of each
pair (`score_pairs`: P(aligned) / P(entailment), one number) or for its 3-way distribution
(`score_pair_distributions`: P(entail), P(neutral), P(contradict), what SummaC reads). Both go
through the same loop (`_score`), so both get everything below. The engine
- deduplicates them (a chunk scored against the same sentence twice is scored once), and skips
  pairs already in the `PairCache` of the same model identity;
- tokenises each distinct premise and hypothesis once, and builds `[CLS] premise [SEP] hypothesis
  [SEP]` (the tokenizer's own special tokens, or the scorer's own `template`: a yes/no model's
  prompt) cutting the premise, then if need be the hypothesis, to `max_length`: every cut is
  counted and flagged per pair, never silent;
- pads each pair to a width that depends on its own length alone (`factlab.batching.padded_width`: at most 12.5%
  more) and packs pairs of one width into batches under a token budget (rows x width), so a pair's score is the
  same to the last bit whatever else is scored with it (alone, inside a file of thousands, in any order), and
  padding stays small, not everything to 512;
- runs under `torch.inference_mode`, in bf16 autocast when asked (`precision`: bf16, or auto where
  the device has native bf16, `resolve_precision`; CPU or CUDA), fp32 otherwise; a scorer of a compiled runtime
  (factlab.models.openvino_aligner: `runs_on_arrays`) takes numpy batches in its own `inference(precision)`
  context, so that this module imports torch only where a torch model runs.
  A bf16 score is cached under its own key: it never answers for an fp32 one.

Cache entries of the two kinds never mix: a distribution is keyed with its kind (and the scorer's
`distribution_identity`, which names how classifier labels map to the three classes), a support
keeps the key it always had, so caches saved before distributions existed still load and hit.

AlignScore's reference loop (each pair alone, padded to 512) is `reference_scores` (support) and
`reference_distributions` (3-way): the throughput benchmark and the parity tests compare them
with the engine.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
import pandas as pd
from tqdm import tqdm

from factlab.batching import width_batches
from factlab.errors import FactlabError
from factlab.io import write_parquet
from factlab.models.protocols import DISTRIBUTION_CLASSES, DistributionScorer, PairScorer, runs_on_arrays
from factlab.runtime import PRECISIONS

if TYPE_CHECKING:  # torch loads where a torch model runs: a compiled runtime's check never imports it
    import torch

    Forward = Callable[[torch.Tensor, torch.Tensor, torch.Tensor | None], torch.Tensor]  # a scorer's support or probabilities

LOG = logging.getLogger(__name__)
# CPU flags of native bf16 arithmetic (Linux /proc/cpuinfo): x86 AVX512-BF16 or AMX, Arm's BF16 extension.
NATIVE_BF16_CPU_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})
SUPPORT, DISTRIBUTION = "support", "distribution"
READBACK_BATCHES = 32  # batches in flight on a GPU before their answers are copied back (a few kB each)
Kind = Literal["support", "distribution"]


@cache
def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The CPU's feature flags (x86 `flags`, Arm `Features`); empty where /proc/cpuinfo does not exist.
    Read once per process: `auto` is resolved on every engine call."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return frozenset()
    flags: set[str] = set()
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("flags", "Features"):
            flags.update(value.split())
    return frozenset(flags)


def native_bf16(device: torch.device) -> bool:
    """Whether `device` does bf16 matrix arithmetic in hardware: CUDA's own answer, or a CPU flag.
    Without it, bf16 autocast on a CPU is emulated: slower than fp32."""
    if device.type == "cuda":
        import torch

        return bool(torch.cuda.is_bf16_supported())
    return device.type == "cpu" and bool(cpu_flags() & NATIVE_BF16_CPU_FLAGS)


def resolve_precision(precision: str, device: torch.device) -> str:
    """fp32 | bf16 as asked; "auto" = bf16 where `device` has native bf16 (`native_bf16`), else fp32."""
    if precision not in PRECISIONS:
        raise FactlabError(f"unknown precision {precision!r}; expected one of {PRECISIONS}")
    if precision == "auto":
        return "bf16" if native_bf16(device) else "fp32"
    return precision


def autocast_context(precision: str, device: torch.device) -> contextlib.ExitStack:
    """bf16 autocast on `device` when `precision` resolves to bf16, else nothing: the training loops'
    forward passes run inside one (weights, gradients and the optimiser stay fp32)."""
    import torch

    stack = contextlib.ExitStack()
    if resolve_precision(precision, device) == "bf16":
        stack.enter_context(torch.autocast(device.type, dtype=torch.bfloat16))
    return stack


def inference_context(precision: str, device: torch.device) -> contextlib.ExitStack:
    """`torch.inference_mode` and `autocast_context`: every model forward of the score stage (the
    engine's, the embedding baselines') runs inside one."""
    import torch

    stack = contextlib.ExitStack()
    stack.enter_context(torch.inference_mode())
    stack.enter_context(autocast_context(precision, device))
    return stack


@dataclass(frozen=True)
class EngineSettings:
    token_budget: int = 16384  # padded tokens per batch (rows x longest row)
    max_batch_pairs: int = 256
    precision: str = "fp32"  # fp32 | bf16 | auto (bf16 where the device has native bf16: CPU flags or CUDA)
    progress: bool = True

    def __post_init__(self) -> None:
        if self.token_budget < 1 or self.max_batch_pairs < 1:
            raise FactlabError("engine token_budget and max_batch_pairs must be positive")
        if self.precision not in PRECISIONS:
            raise FactlabError(f"unknown precision {self.precision!r}; expected one of {PRECISIONS}")


class EngineChoices(Protocol):
    """The engine's settings as they are configured: a scoring command's arguments, a checker card's settings."""

    token_budget: int
    max_batch_pairs: int
    precision: str


def engine_settings(choices: EngineChoices, device: torch.device, *, progress: bool = True) -> EngineSettings:
    """The engine's batching as `choices` configure it, with precision "auto" resolved for `device` (the precision
    a report records)."""
    precision = resolve_precision(choices.precision, device)
    return EngineSettings(choices.token_budget, choices.max_batch_pairs, precision, progress=progress)


@dataclass
class EncodedPairs:
    """Pairs encoded column-wise: each pair's kept premise and hypothesis pieces are a (start, count) into a pool
    of every distinct text's pieces, so `pad_batch` gathers a batch with numpy. Lists built per pair and per piece
    would be most of the engine's CPU time, which a GPU waits for."""

    template: PairTemplate
    premise_pool: np.ndarray  # the pieces of every distinct premise, concatenated
    premise_start: np.ndarray  # per pair: where its premise starts in the pool
    premise_kept: np.ndarray  # per pair: premise pieces kept
    hypothesis_pool: np.ndarray
    hypothesis_start: np.ndarray
    hypothesis_kept: np.ndarray
    premise_cut: np.ndarray  # per pair: word pieces of the premise left out
    hypothesis_cut: np.ndarray

    @property
    def lengths(self) -> np.ndarray:
        """Pieces of each encoded pair, special tokens included."""
        return self.template.special_pieces + self.premise_kept + self.hypothesis_kept

    def pair(self, index: int) -> tuple[list[int], list[int]]:
        """One pair's ids and token types (for inspection and tests; batches come from `pad_batch`)."""
        start, kept = self.premise_start[index], self.premise_kept[index]
        h_start, h_kept = self.hypothesis_start[index], self.hypothesis_kept[index]
        premise = self.premise_pool[start : start + kept].tolist()
        return self.template.build(premise, self.hypothesis_pool[h_start : h_start + h_kept].tolist())


@dataclass
class EngineResult:
    scores: np.ndarray  # one per input pair, in input order
    premise_cut: np.ndarray  # word pieces cut from each pair's premise (0 = whole)
    hypothesis_cut: np.ndarray
    counts: dict[str, int] = field(default_factory=dict)
    batch_shapes: list[tuple[int, int]] = field(default_factory=list)  # (rows, padded width) of each batch run


@dataclass
class DistributionResult:
    """`score_pair_distributions`' answer: like `EngineResult`, with a row of three probabilities per pair."""

    probabilities: np.ndarray  # [pairs, 3] in input order; columns DISTRIBUTION_CLASSES (entail, neutral, contradict)
    premise_cut: np.ndarray
    hypothesis_cut: np.ndarray
    counts: dict[str, int] = field(default_factory=dict)
    batch_shapes: list[tuple[int, int]] = field(default_factory=list)


def pair_key(identity: str, premise: str, hypothesis: str, kind: Kind = SUPPORT) -> str:
    """Cache key: the model identity and both texts (separators that cannot occur in ordinary text).

    A support key is what it was before distributions existed (saved caches keep hitting); any
    other kind is hashed in, so a distribution can never be read as a support or the reverse.
    """
    tag = "" if kind == SUPPORT else f"\x1d{kind}"
    return hashlib.sha1(f"{identity}{tag}\x1f{premise}\x1e{hypothesis}".encode()).hexdigest()


class PairCache:
    """Scores by pair hash, shared by every scorer of a job that uses the same weights; optionally a parquet file.

    Supports (`get`/`put`) and 3-way distributions (`get_distribution`/`put_distribution`) are kept
    apart; the parquet file holds both, a `kind` column telling them apart (files without it are
    all supports, as written before distributions existed).
    """

    def __init__(self) -> None:
        self.scores: dict[str, tuple[float, int, int]] = {}
        self.distributions: dict[str, tuple[tuple[float, float, float], int, int]] = {}

    def get(self, key: str) -> tuple[float, int, int] | None:
        return self.scores.get(key)

    def put(self, key: str, score: float, premise_cut: int, hypothesis_cut: int) -> None:
        self.scores[key] = (score, premise_cut, hypothesis_cut)

    def get_distribution(self, key: str) -> tuple[tuple[float, float, float], int, int] | None:
        return self.distributions.get(key)

    def put_distribution(self, key: str, probabilities: Sequence[float], premise_cut: int, hypothesis_cut: int) -> None:
        entail, neutral, contradict = (float(value) for value in probabilities)
        self.distributions[key] = ((entail, neutral, contradict), premise_cut, hypothesis_cut)

    def save(self, path: str | Path) -> None:
        nan = float("nan")
        rows = [(key, SUPPORT, score, nan, nan, nan, p, h) for key, (score, p, h) in sorted(self.scores.items())]
        rows += [(key, DISTRIBUTION, nan, *probs, p, h) for key, (probs, p, h) in sorted(self.distributions.items())]
        columns = ["key", "kind", "score", *(f"p_{name}" for name in DISTRIBUTION_CLASSES), "premise_cut", "hypothesis_cut"]
        frame = pd.DataFrame.from_records(rows, columns=columns)
        write_parquet(frame.astype({"premise_cut": "int64", "hypothesis_cut": "int64"}), path)

    @classmethod
    def load(cls, path: str | Path) -> PairCache:
        cache = cls()
        if not Path(path).is_file():
            return cache
        frame = pd.read_parquet(path)
        if "kind" not in frame.columns:  # written before distributions existed: supports only
            frame = frame.assign(kind=SUPPORT)
        for row in frame[frame["kind"] == SUPPORT].itertuples(index=False):
            cache.put(row.key, float(row.score), int(row.premise_cut), int(row.hypothesis_cut))
        distributions = frame[frame["kind"] == DISTRIBUTION]
        if len(distributions):
            probabilities = distributions[[f"p_{name}" for name in DISTRIBUTION_CLASSES]].to_numpy(dtype=np.float64)
            cuts = zip(distributions["premise_cut"], distributions["hypothesis_cut"], strict=True)
            for key, probs, (p, h) in zip(distributions["key"], probabilities, cuts, strict=True):
                cache.put_distribution(key, probs, int(p), int(h))
        return cache

    def lookup(self, kind: Kind, key: str) -> tuple[Any, int, int] | None:
        return self.get(key) if kind == SUPPORT else self.get_distribution(key)

    def store(self, kind: Kind, key: str, value: np.ndarray, premise_cut: int, hypothesis_cut: int) -> None:
        if kind == SUPPORT:
            self.put(key, float(value), premise_cut, hypothesis_cut)
        else:
            self.put_distribution(key, value, premise_cut, hypothesis_cut)


@dataclass(frozen=True)
class PairTemplate:
    """Where a tokenizer puts its special tokens around a pair (BERT: [CLS] a [SEP] b [SEP]; RoBERTa: <s> a </s></s> b </s>)."""

    prefix: list[int]
    middle: list[int]
    suffix: list[int]
    type_a: int  # token type of the prefix, premise and middle
    type_b: int  # token type of the hypothesis and suffix
    hypothesis_format: str = "{hypothesis}"  # the text tokenised as the hypothesis (a prompt around it: factlab.models.yesno)

    def hypothesis_text(self, hypothesis: str) -> str:
        return self.hypothesis_format.format(hypothesis=hypothesis)

    @property
    def special_pieces(self) -> int:
        return len(self.prefix) + len(self.middle) + len(self.suffix)

    def build(self, premise_ids: list[int], hypothesis_ids: list[int]) -> tuple[list[int], list[int]]:
        ids = self.prefix + premise_ids + self.middle + hypothesis_ids + self.suffix
        first = len(self.prefix) + len(premise_ids) + len(self.middle)
        return ids, [self.type_a] * first + [self.type_b] * (len(ids) - first)


def pair_template(tokenizer: Any) -> PairTemplate:
    """Read the template off the tokenizer's encoding of a two-marker pair."""
    marker_a, marker_b = (tokenizer(text, add_special_tokens=False)["input_ids"] for text in ("a", "b"))
    encoded = tokenizer("a", "b")
    ids = list(encoded["input_ids"])
    if len(marker_a) != 1 or len(marker_b) != 1:
        raise FactlabError("cannot read the tokenizer's pair template")
    a = ids.index(marker_a[0])
    b = a + 1 + ids[a + 1 :].index(marker_b[0])
    types = list(encoded.get("token_type_ids") or [0] * len(ids))
    return PairTemplate(ids[:a], ids[a + 1 : b], ids[b + 1 :], types[a], types[b])


def scorer_template(scorer: PairScorer) -> PairTemplate:
    """The scorer's own template where it has one (a prompt: factlab.models.yesno), else its tokenizer's pair template."""
    template = getattr(scorer, "template", None)
    return template if isinstance(template, PairTemplate) else pair_template(scorer.tokenizer)


def encode_pairs(
    tokenizer: Any, pairs: Sequence[tuple[str, str]], max_length: int, template: PairTemplate | None = None
) -> EncodedPairs:
    """Token ids of each pair inside `template` (default: the tokenizer's special tokens); premise cut first, then hypothesis."""
    with paused_garbage_collection():
        return _encode_pairs(tokenizer, pairs, max_length, template or pair_template(tokenizer))


@contextlib.contextmanager
def paused_garbage_collection() -> Iterator[None]:
    """Encoding makes a few lists per text and no cycles, so the collector's passes over them find nothing to
    free and only slow `encode_pairs` down: they are paused while it runs."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _pool(pieces: list[list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every text's pieces concatenated, with each text's start and length."""
    lengths = np.fromiter((len(ids) for ids in pieces), dtype=np.int64, count=len(pieces))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    pool = np.fromiter(chain.from_iterable(pieces), dtype=np.int64, count=int(lengths.sum()))
    return pool, starts, lengths


def _encode_pairs(tokenizer: Any, pairs: Sequence[tuple[str, str]], max_length: int, template: PairTemplate) -> EncodedPairs:
    room = max_length - template.special_pieces
    if room < 2:
        raise FactlabError(f"max_length {max_length} leaves no room for a pair")
    premises = {premise: index for index, premise in enumerate(sorted({premise for premise, _ in pairs}))}
    hypotheses = {hypothesis: index for index, hypothesis in enumerate(sorted({hypothesis for _, hypothesis in pairs}))}
    premise_pool, premise_starts, premise_lengths = _pool(tokenizer(list(premises), add_special_tokens=False)["input_ids"])
    hypothesis_pieces = tokenizer([template.hypothesis_text(hypothesis) for hypothesis in hypotheses], add_special_tokens=False)
    hypothesis_pool, hypothesis_starts, hypothesis_lengths = _pool(hypothesis_pieces["input_ids"])
    premise_of = np.fromiter((premises[premise] for premise, _ in pairs), dtype=np.int64, count=len(pairs))
    hypothesis_of = np.fromiter((hypotheses[hypothesis] for _, hypothesis in pairs), dtype=np.int64, count=len(pairs))
    premise_length, hypothesis_length = premise_lengths[premise_of], hypothesis_lengths[hypothesis_of]
    hypothesis_cut = np.maximum(0, hypothesis_length - (room - 1))  # keep at least one premise piece
    hypothesis_kept = hypothesis_length - hypothesis_cut
    premise_cut = np.maximum(0, premise_length - (room - hypothesis_kept))
    return EncodedPairs(
        template,
        premise_pool,
        premise_starts[premise_of],
        premise_length - premise_cut,
        hypothesis_pool,
        hypothesis_starts[hypothesis_of],
        hypothesis_kept,
        premise_cut,
        hypothesis_cut,
    )


def pad_batch(
    encoded: EncodedPairs, rows: Sequence[int], pad_id: int, device: torch.device, width: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`pad_arrays` as torch tensors on `device`."""
    import torch

    non_blocking = device.type == "cuda"
    return tuple(  # type: ignore[return-value]
        torch.from_numpy(array).to(device, non_blocking=non_blocking) for array in pad_arrays(encoded, rows, pad_id, width)
    )


def batch_inputs(
    encoded: EncodedPairs, rows: Sequence[int], scorer: PairScorer, width: int | None = None
) -> tuple[Any, Any, Any]:
    """A batch as `scorer` takes it: numpy arrays for a compiled runtime, else torch tensors on its device."""
    pad_id = scorer.tokenizer.pad_token_id
    if runs_on_arrays(scorer):
        return pad_arrays(encoded, rows, pad_id, width)
    return pad_batch(encoded, rows, pad_id, scorer.device, width)


def run_context(scorer: PairScorer, precision: str) -> contextlib.AbstractContextManager[Any]:
    """Where `scorer`'s forwards run: a compiled runtime's own `inference(precision)`, else `inference_context`."""
    if runs_on_arrays(scorer):
        return scorer.inference(precision)  # type: ignore[attr-defined]
    return inference_context(precision, scorer.device)


def batch_token_budget(scorer: PairScorer, settings: EngineSettings) -> int:
    """Padded tokens per batch: the settings' budget, capped by the scorer's own `max_batch_tokens` where it has one
    (factlab.models.openvino_aligner). A row's answer does not depend on its batch, so the cap changes memory, not
    scores."""
    cap = getattr(scorer, "max_batch_tokens", None)
    return settings.token_budget if cap is None else min(settings.token_budget, int(cap))


def host_array(values: Any) -> np.ndarray:
    """A forward's answer as a float numpy array on the host (a torch tensor is copied back; an array stays)."""
    return values if isinstance(values, np.ndarray) else values.float().cpu().numpy()


def pad_arrays(
    encoded: EncodedPairs, rows: Sequence[int], pad_id: int, width: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ids, attention mask and token types (int64) of `encoded`'s `rows`, right-padded to `width` (default: the
    longest row).
    Each cell says which segment it reads (prefix, premise, middle, hypothesis, suffix, padding) and where: a few
    whole-array numpy operations, no Python per row or per piece."""
    template = encoded.template
    rows = np.asarray(rows, dtype=np.int64)
    premise_kept = encoded.premise_kept[rows][:, None]
    hypothesis_kept = encoded.hypothesis_kept[rows][:, None]
    # where each segment starts, per row: prefix | premise | middle | hypothesis | suffix | padding
    premise_from = len(template.prefix)
    middle_from = premise_from + premise_kept
    hypothesis_from = middle_from + len(template.middle)
    suffix_from = hypothesis_from + hypothesis_kept
    end = suffix_from + len(template.suffix)
    longest = int(end.max())
    if width is not None and width < longest:
        raise FactlabError(f"pad width {width} is narrower than the longest row ({longest} pieces)")
    column = np.arange(longest if width is None else width)[None, :]
    specials = np.array([*template.prefix, *template.middle, *template.suffix, pad_id], dtype=np.int64)
    premise_cell = encoded.premise_start[rows][:, None] + column - premise_from
    hypothesis_cell = encoded.hypothesis_start[rows][:, None] + column - hypothesis_from
    in_premise = (column >= premise_from) & (column < middle_from)
    in_hypothesis = (column >= hypothesis_from) & (column < suffix_from)
    special_cell = np.select(  # the cell's index into `specials` (pad last)
        [column < premise_from, column < hypothesis_from, column < end],
        [column, len(template.prefix) + column - middle_from, len(template.prefix) + len(template.middle) + column - suffix_from],
        len(specials) - 1,
    )
    ids = specials[np.where(in_premise | in_hypothesis, 0, special_cell)]
    ids[in_premise] = encoded.premise_pool[premise_cell[in_premise]]
    ids[in_hypothesis] = encoded.hypothesis_pool[hypothesis_cell[in_hypothesis]]
    mask = column < end
    types = np.where(column < hypothesis_from, template.type_a, template.type_b) * mask
    return tuple(np.ascontiguousarray(array, dtype=np.int64) for array in (ids, mask, types))  # type: ignore[return-value]


def two_rows_at_least(rows: Sequence[int]) -> list[int]:
    """`rows`, a single row twice: a one-row matrix product takes another kernel path (matrix-vector) whose sums
    round differently (a linear head's logits by up to 6e-8), so a batch always has two rows or more and a pair that
    is alone in its width scores as it does among others. The copy's answer is dropped."""
    return list(rows) * 2 if len(rows) == 1 else list(rows)


def score_pairs(
    scorer: PairScorer,
    pairs: Sequence[tuple[str, str]],
    settings: EngineSettings | None = None,
    cache: PairCache | None = None,
    description: str = "pairs",
) -> EngineResult:
    """Support scores of every (premise, hypothesis) pair, in input order."""
    run = _score(scorer, pairs, SUPPORT, settings, cache, description)
    return EngineResult(run.values, run.premise_cut, run.hypothesis_cut, run.counts, run.batch_shapes)


def score_pair_distributions(
    scorer: DistributionScorer,
    pairs: Sequence[tuple[str, str]],
    settings: EngineSettings | None = None,
    cache: PairCache | None = None,
    description: str = "pairs",
) -> DistributionResult:
    """P(entail), P(neutral), P(contradict) of every (premise, hypothesis) pair, in input order."""
    if not callable(getattr(scorer, "probabilities", None)):
        raise FactlabError(f"scorer {scorer.identity!r} gives support only, not a 3-way distribution")
    run = _score(scorer, pairs, DISTRIBUTION, settings, cache, description)
    probabilities = run.values.reshape(len(pairs), len(DISTRIBUTION_CLASSES))
    return DistributionResult(probabilities, run.premise_cut, run.hypothesis_cut, run.counts, run.batch_shapes)


@dataclass
class _Run:
    values: np.ndarray  # [pairs] supports or [pairs, 3] distributions
    premise_cut: np.ndarray
    hypothesis_cut: np.ndarray
    counts: dict[str, int]
    batch_shapes: list[tuple[int, int]]


def _score(
    scorer: Any,
    pairs: Sequence[tuple[str, str]],
    kind: Kind,
    settings: EngineSettings | None,
    cache: PairCache | None,
    description: str,
) -> _Run:
    """The one batching loop: dedup against the cache, encode with counted cuts, length batches, one forward per batch."""
    settings = settings or EngineSettings()
    cache = cache if cache is not None else PairCache()
    identity = scorer.identity if kind == SUPPORT else scorer.distribution_identity
    precision = resolve_precision(settings.precision, scorer.device)
    if precision == "bf16":  # bf16 scores differ from fp32 ones in the third decimal: never one for the other
        identity += "\x1dbf16"
    forward = scorer.support if kind == SUPPORT else scorer.probabilities
    keys = [pair_key(identity, premise, hypothesis, kind) for premise, hypothesis in pairs]
    todo: dict[str, tuple[str, str]] = {}
    for key, pair in zip(keys, pairs, strict=True):
        if cache.lookup(kind, key) is None and key not in todo:
            todo[key] = pair
    todo_keys = list(todo)
    pending = [todo[key] for key in todo_keys]
    encoded = encode_pairs(scorer.tokenizer, pending, scorer.max_length, scorer_template(scorer)) if todo else None
    lengths = encoded.lengths.tolist() if encoded is not None else []
    # nothing to score: no batch, and no read of the model (a deferred scorer then never loads its weights)
    budget = batch_token_budget(scorer, settings)
    batches = width_batches(lengths, settings.max_batch_pairs, budget, scorer.max_length) if lengths else []
    shapes: list[tuple[int, int]] = []
    answers: list[tuple[list[int], Any]] = []
    with run_context(scorer, precision):
        for batch, width in tqdm(batches, desc=description, unit="batch", disable=not settings.progress, mininterval=10):
            ids, mask, types = batch_inputs(encoded, two_rows_at_least(batch), scorer, width)  # type: ignore[arg-type]
            shapes.append(tuple(ids.shape))
            answer = forward(ids, mask, types)[: len(batch)]
            if kind == DISTRIBUTION:
                _check_distribution_shape(answer, len(batch))
            # Read back later on a GPU (READBACK_BATCHES at a time): the next batches are padded and queued while
            # this one computes, instead of the CPU waiting for each batch and the GPU then idling while it pads.
            answers.append((batch, answer if isinstance(answer, np.ndarray) else answer.float()))
            if len(answers) >= READBACK_BATCHES or scorer.device.type != "cuda":
                _store_answers(answers, encoded, todo_keys, kind, cache)
        _store_answers(answers, encoded, todo_keys, kind, cache)
    entries = [cache.lookup(kind, key) for key in keys]
    values = np.array([entry[0] for entry in entries], dtype=np.float64)
    premise_cut = np.array([entry[1] for entry in entries], dtype=np.int64)
    hypothesis_cut = np.array([entry[2] for entry in entries], dtype=np.int64)
    counts = {
        "pairs": len(pairs),
        "distinct_pairs_scored": len(lengths),
        "pairs_from_cache_or_duplicates": len(pairs) - len(lengths),
        "batches": len(batches),
        "tokens": sum(lengths),
        "padded_tokens": sum(rows * width for rows, width in shapes),
        "pairs_premise_cut": int((premise_cut > 0).sum()),
        "pairs_hypothesis_cut": int((hypothesis_cut > 0).sum()),
        "premise_pieces_cut": int(premise_cut.sum()),
    }
    if counts["pairs_premise_cut"] or counts["pairs_hypothesis_cut"]:
        LOG.warning(
            "%s: %d pairs had their premise cut to fit %d word pieces",
            description,
            counts["pairs_premise_cut"],
            scorer.max_length,
        )
    return _Run(values, premise_cut, hypothesis_cut, counts, shapes)


def _store_answers(
    answers: list[tuple[list[int], Any]], encoded: EncodedPairs | None, keys: list[str], kind: Kind, cache: PairCache
) -> None:
    """Copy the batches' answers to the CPU and into the cache; empties `answers`."""
    for batch, answer in answers:
        assert encoded is not None  # answers exist only for encoded pairs
        premise_cut, hypothesis_cut = encoded.premise_cut[batch].tolist(), encoded.hypothesis_cut[batch].tolist()
        for index, value, p_cut, h_cut in zip(batch, host_array(answer), premise_cut, hypothesis_cut, strict=True):
            cache.store(kind, keys[index], value, p_cut, h_cut)
    answers.clear()


def _check_distribution_shape(values: Any, rows: int) -> None:
    """A distribution has three columns: anything else would be cached, mislabelled, under every key of the batch."""
    expected = (rows, len(DISTRIBUTION_CLASSES))
    if tuple(values.shape) != expected:
        raise FactlabError(f"scorer returned distributions of shape {tuple(values.shape)}, expected {expected}")


def reference_scores(scorer: PairScorer, pairs: Iterable[tuple[str, str]], pad_to: int = 512) -> np.ndarray:
    """AlignScore's reference inference loop: each pair alone, tokenised with truncation and padded to `pad_to`."""
    return _reference_loop(scorer, scorer.support, pairs, pad_to)


def reference_distributions(scorer: DistributionScorer, pairs: Iterable[tuple[str, str]], pad_to: int = 512) -> np.ndarray:
    """The reference loop for 3-way distributions ([pairs, 3]): the oracle of `score_pair_distributions`."""
    values = _reference_loop(scorer, scorer.probabilities, pairs, pad_to)
    return values.reshape(-1, len(DISTRIBUTION_CLASSES))


def _reference_loop(scorer: PairScorer, forward: Forward, pairs: Iterable[tuple[str, str]], pad_to: int) -> np.ndarray:
    import torch

    tokenizer = scorer.tokenizer
    out = []
    with torch.inference_mode():
        for premise, hypothesis in pairs:
            batch = tokenizer(
                [premise],
                [hypothesis],
                truncation="only_first",
                max_length=min(pad_to, scorer.max_length),
                padding="max_length",
                return_tensors="pt",
            ).to(scorer.device)
            types = batch.get("token_type_ids")
            out.append(forward(batch["input_ids"], batch["attention_mask"], types)[0].float().cpu().numpy())
    return np.array(out, dtype=np.float64)
