"""Training factlab's QASem parser (model.py, parser.py) on the mirrored gold data.

Training data: QANom train (nominal predicates, predicate-detection labels) and the QA-SRL gold
standard's dev set (verbal predicates); GS sentences `qasrl_gs_repeats` times per epoch (GS is the
only verbal data, and 7x smaller). With `qanom_dev_training`, QANom dev trains too: its
annotations of GS dev sentences are merged into them (one sentence, verbs and event nouns), and
its other sentences, outside the nominal validation sample, join as they are.
Sentence mode: one encoder row per sentence; marker mode (`predicate_marker`): one row per
predicate plus detection rows for a fresh seeded sample of `detection_sentences` sentences per
epoch (model.py). Validation: QANom dev sentences that are not QA-SRL GS dev sentences (the two
share 830), a seeded sample, scored after each epoch with gold predicates; and
`verbal_validation_sentences` GS dev sentences held out of training (verbal validation). After
training, each kind's span decoding (decoding.py: biases, a confidence floor, no stop-word-only
spans) is chosen on its validation set (`tune_decoding`: GS-style verbal
annotation is denser than QANom's, so one argmax does not suit both). QA-SRL GS test and QANom
test are never read here.

Loss = detection + argument B/I/O + template cross-entropy (each a mean over labelled items).
AdamW with two learning rates (encoder, heads), linear warm-up then linear decay, gradient
clipping; fixed seeds (Python, NumPy, torch). What cannot be used is counted, not dropped
silently: arguments or predicates cut off by `max_seq_len` (`dropped_*_truncated`), repeated or
overlapping spans of one predicate (B/I/O cannot hold them), questions whose verb slot upstream
left unparsed (their span still trains the tagger, not the template head).
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd
import torch

from factlab.errors import FactlabError
from factlab.models.engine import autocast_context, resolve_precision
from factlab.models.qasem.analysis import analyse, is_noun_candidate, token_verb_lemma
from factlab.models.qasem.benchmark import gold_arguments, gold_predicates, score_on_gold
from factlab.models.qasem.data import (
    IGNORE,
    QANOM,
    QASRL_GS,
    GoldSentence,
    count_arguments,
    gold_sentences,
    merge_annotations,
    unlabel_nouns,
)
from factlab.models.qasem.decoding import tune_decoding
from factlab.models.qasem.model import (
    KIND_NOMINAL,
    KIND_VERBAL,
    EncodedSentence,
    NetworkConfig,
    PredicateTarget,
    QASemNetwork,
    argument_row,
    encode_sentences,
    make_batch,
    sentence_row,
)
from factlab.models.qasem.parser import FactlabQASemParser
from factlab.models.qasem.templates import TemplateVocabulary
from factlab.runtime import load_encoder, load_tokenizer, select_device
from factlab.train.loop import bucketed_batches, linear_schedule, optimizer_for, seed_everything

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainSettings:
    epochs: int = 3
    batch_sentences: int = 16
    max_seq_len: int = 128
    encoder_lr: float = 5e-5
    head_lr: float = 5e-4
    weight_decay: float = 0.01
    warmup_fraction: float = 0.06
    grad_clip: float = 1.0
    template_loss_weight: float = 1.0  # weight of the question-template loss beside the detection and argument losses
    seed: int = 2022
    min_template_count: int = 3
    encoder_layers: int = 6
    freeze_word_embeddings: bool = True
    head_dim: int = 256
    head_layers: int = 2
    qasrl_gs_repeats: int = 2
    qanom_dev_training: bool = (
        True  # QANom dev trains too (on GS dev sentences merged with their verbal QAs), except the validation sample
    )
    predicate_marker: bool = False  # marker mode: one encoder row per predicate (model.py)
    detection_sentences: int = 2000  # marker mode: detection rows per epoch, a fresh seeded sample each epoch
    max_train_sentences: int = 0  # 0 = all; else a seeded sample, each source in proportion
    validation_sentences: int = 300  # QANom dev sample (nominal validation); 0 = none
    verbal_validation_sentences: int = 100  # GS dev sentences held out of training (verbal validation); 0 = none
    tune_decoding: bool = True  # after training, pick each kind's span decoding on its validation set
    log_every: int = 50  # steps between progress lines

    def __post_init__(self) -> None:
        positive = (
            "epochs",
            "batch_sentences",
            "max_seq_len",
            "min_template_count",
            "encoder_layers",
            "head_dim",
            "head_layers",
            "qasrl_gs_repeats",
            "log_every",
        )
        bad = [name for name in positive if getattr(self, name) < 1]
        bad += [
            name
            for name in (
                "detection_sentences",
                "max_train_sentences",
                "validation_sentences",
                "verbal_validation_sentences",
                "weight_decay",
                "grad_clip",
                "template_loss_weight",
            )
            if getattr(self, name) < 0
        ]
        if not 0 <= self.warmup_fraction < 1:
            bad.append("warmup_fraction")
        if bad:
            raise FactlabError(f"invalid QASem training settings: {bad}")


@dataclass
class TrainingData:
    train: list[GoldSentence]
    validation: list[GoldSentence]  # nominal: QANom dev
    verbal_validation: list[GoldSentence]  # verbal: held-out GS dev
    noun_verbs: dict[str, str]
    counts: dict[str, int]


def sample(items: list[GoldSentence], n: int, rng: random.Random) -> list[GoldSentence]:
    return items if n <= 0 or n >= len(items) else rng.sample(items, n)


def noun_verb_lexicon(qanom: pd.DataFrame, split: str = "train") -> dict[str, str]:
    """Lower-cased candidate noun -> its most frequent QANom verb form (ties: alphabetical)."""
    rows = qanom[(qanom["split"] == split) & qanom["verb_form"].notna() & (qanom["verb_form"] != "")]
    rows = rows.drop_duplicates("key")
    counts = Counter(zip(rows["predicate"].str.lower(), rows["verb_form"].str.lower(), strict=True))
    best: dict[str, tuple[int, str]] = {}
    for (noun, verb), n in counts.items():
        if noun not in best or (-n, verb) < (-best[noun][0], best[noun][1]):
            best[noun] = (n, verb)
    return {noun: verb for noun, (_, verb) in sorted(best.items())}


def prepare_training(qasrl_gs: pd.DataFrame, qanom: pd.DataFrame, settings: TrainSettings) -> TrainingData:
    rng = random.Random(settings.seed)
    gs_dev, gs_counts = gold_sentences(qasrl_gs, QASRL_GS, "dev")
    gs_ids = {s.sentence_id for s in gs_dev}
    verbal_validation = sample(gs_dev, settings.verbal_validation_sentences, rng) if settings.verbal_validation_sentences else []
    if len(verbal_validation) == len(gs_dev):
        raise FactlabError("verbal_validation_sentences holds out every GS dev sentence: nothing verbal is left to train on")
    held_out = {id(sentence) for sentence in verbal_validation}
    gs_dev = [sentence for sentence in gs_dev if id(sentence) not in held_out]
    qanom_train, qanom_counts = gold_sentences(qanom, QANOM, "train")
    n_qanom_train = len(qanom_train)
    total = len(gs_dev) + len(qanom_train)
    if settings.max_train_sentences and settings.max_train_sentences < total:
        n_gs = max(1, round(settings.max_train_sentences * len(gs_dev) / total))
        gs_dev = sample(gs_dev, n_gs, rng)
        qanom_train = sample(qanom_train, max(1, settings.max_train_sentences - n_gs), rng)
    for sentence, doc in zip(gs_dev + verbal_validation, analyse([s.tokens for s in gs_dev + verbal_validation]), strict=True):
        unlabel_nouns(sentence, [is_noun_candidate(token) for token in doc])
        for predicate in sentence.predicates:
            predicate.verb_form = token_verb_lemma(doc[predicate.index])  # GS gives none; the parser does the same
    counts: dict[str, int] = {
        **{f"qasrl_gs_dev_{k}": v for k, v in count_arguments(gs_dev).items()},
        **{f"qanom_train_{k}": v for k, v in count_arguments(qanom_train).items()},
        "qanom_train_dropped_qas_on_non_verbal_predicate": qanom_counts["dropped_qas_on_non_verbal_predicate"],
        "qasrl_gs_dev_dropped_qas_on_non_verbal_predicate": gs_counts["dropped_qas_on_non_verbal_predicate"],
    }
    qanom_dev = gold_sentences(qanom, QANOM, "dev")[0] if settings.validation_sentences or settings.qanom_dev_training else []
    validation = (
        sample([s for s in qanom_dev if s.sentence_id not in gs_ids], settings.validation_sentences, rng)
        if settings.validation_sentences
        else []
    )
    qanom_dev_train: list[GoldSentence] = []
    if settings.qanom_dev_training:
        gs_dev, qanom_dev_train = with_qanom_dev(gs_dev, qanom_dev, gs_ids | {s.sentence_id for s in validation}, counts)
        if settings.max_train_sentences:  # smoke runs: the same share of QANom dev as of QANom train
            qanom_dev_train = sample(qanom_dev_train, max(1, round(len(qanom_dev_train) * len(qanom_train) / n_qanom_train)), rng)
        counts.update({f"qanom_dev_train_{k}": v for k, v in count_arguments(qanom_dev_train).items()})
    counts.update({f"validation_{k}": v for k, v in count_arguments(validation).items()})
    counts.update({f"verbal_validation_{k}": v for k, v in count_arguments(verbal_validation).items()})
    train = gs_dev * settings.qasrl_gs_repeats + qanom_train + qanom_dev_train
    return TrainingData(train, validation, verbal_validation, noun_verb_lexicon(qanom), counts)


def with_qanom_dev(
    gs_dev: list[GoldSentence], qanom_dev: list[GoldSentence], not_alone: set[str], counts: dict[str, int]
) -> tuple[list[GoldSentence], list[GoldSentence]]:
    """QANom dev for training: merged into the GS dev sentences it annotates, and on its own for its
    sentences outside `not_alone` (GS dev, incl. the verbal hold-out, and the nominal validation)."""
    by_id = {sentence.sentence_id: sentence for sentence in qanom_dev}
    merge_counts: Counter[str] = Counter()
    merged = [merge_annotations(s, by_id[s.sentence_id], merge_counts) if s.sentence_id in by_id else s for s in gs_dev]
    shared = [by_id[s.sentence_id] for s in gs_dev if s.sentence_id in by_id]
    counts.update({f"qanom_dev_merged_{k}": v for k, v in count_arguments(shared).items()})
    counts["qanom_dev_dropped_nominal_predicates_on_verbs"] = merge_counts["dropped_nominal_predicates_on_verbs"]
    return merged, [s for s in qanom_dev if s.sentence_id not in not_alone]


def training_targets(
    sentence: GoldSentence, encoded: EncodedSentence, vocabulary: TemplateVocabulary, counts: Counter[str]
) -> list[tuple[PredicateTarget, str]]:
    """(target, verb form) per usable predicate of a sentence; what cannot be used is counted."""
    targets = []
    for predicate in sentence.predicates:
        if encoded.word_pieces[predicate.index] < 0:
            counts["dropped_predicates_truncated"] += 1
            counts["dropped_arguments_truncated"] += len(predicate.arguments)
            continue
        target = PredicateTarget(predicate.index, KIND_VERBAL if predicate.is_verbal else KIND_NOMINAL)
        for argument in sorted(predicate.arguments, key=lambda a: (a.start, a.end)):
            span = (argument.start, argument.end)
            if any(encoded.word_pieces[i] < 0 for i in range(*span)):
                counts["dropped_arguments_truncated"] += 1
            elif span in target.spans:
                counts["dropped_arguments_repeated_span"] += 1
            elif any(start < span[1] and span[0] < end for start, end in target.spans):
                counts["dropped_arguments_overlapping"] += 1
            else:
                template = vocabulary.index(argument.slots)
                counts["template_unparsed_questions"] += template is None
                target.spans.append(span)
                target.templates.append(IGNORE if template is None else template)
        targets.append((target, predicate.verb_form or sentence.tokens[predicate.index].lower()))
    return targets


def validate(parser: FactlabQASemParser, data: TrainingData) -> dict[str, float]:
    """UA/LA on each validation set (gold predicates): `validation_*` nominal, `verbal_validation_*`."""
    scores: dict[str, float] = {}
    for prefix, sentences in (("validation", data.validation), ("verbal_validation", data.verbal_validation)):
        if sentences:
            counts, _ = score_on_gold(parser, sentences)
            scores.update({f"{prefix}_{name}": value for name, value in counts.as_row().items()})
    return scores


def tune_parser_decoding(parser: FactlabQASemParser, sentences: list[GoldSentence], kind: int) -> dict[str, Any]:
    """Sets the decoding of `kind` to the DECODING_GRID setting with the best UA-F1 on the gold
    predicates of that kind in `sentences` (the network runs once); returns the choice and the grid."""
    tagged = parser.tag_predicates(
        [s.sentence_id for s in sentences], [s.tokens for s in sentences], [gold_predicates(s) for s in sentences]
    )[kind]
    chosen, grid = tune_decoding(tagged, gold_arguments(sentences))
    parser.decoding[kind] = chosen
    return {"chosen": chosen.to_json(), "grid": grid}


def train_parser(
    data: TrainingData, settings: TrainSettings, device: str = "auto", precision: str = "fp32"
) -> tuple[FactlabQASemParser, dict[str, Any]]:
    """Train a parser; returns it and the training log (per-epoch losses, validation, timings).
    `precision` (fp32 | bf16 | auto, factlab.models.engine.resolve_precision): bf16 autocasts the training
    forward passes; the weights, gradients, optimiser and validation stay fp32."""
    seed_everything(settings.seed)
    started = time.perf_counter()
    rng = random.Random(settings.seed)
    unique = {id(sentence): sentence for sentence in data.train}.values()  # GS repeats count once (and encode once)
    questions = [a.slots for s in unique for p in s.predicates for a in p.arguments]
    vocabulary = TemplateVocabulary.build(questions, settings.min_template_count)
    tokenizer = load_tokenizer()
    sentences = list(unique)
    encoded = encode_sentences(tokenizer, [s.tokens for s in sentences], settings.max_seq_len)
    encoded_by_id = {id(sentence): item for sentence, item in zip(sentences, encoded, strict=True)}
    counts: Counter[str] = Counter()
    config = NetworkConfig(
        n_templates=len(vocabulary),
        encoder_layers=settings.encoder_layers,
        head_dim=settings.head_dim,
        head_layers=settings.head_layers,
        max_seq_len=settings.max_seq_len,
        predicate_marker=settings.predicate_marker,
    )
    network = QASemNetwork(load_encoder(pretrained=True, layers=settings.encoder_layers), config)
    if settings.freeze_word_embeddings:
        network.encoder.embeddings.word_embeddings.weight.requires_grad_(False)  # types and positions still learn
    parser = FactlabQASemParser(network, vocabulary, data.noun_verbs, device=device, copular=False)
    # Rows built once (GS repeats included); what cannot be used is counted once per sentence.
    targets = {
        id(sentence): training_targets(sentence, encoded_by_id[id(sentence)], vocabulary, counts) for sentence in sentences
    }
    if settings.predicate_marker:
        fixed_rows = [
            argument_row(encoded_by_id[id(sentence)], target, parser.verb_pieces(verb), tokenizer.sep_token_id)
            for sentence in data.train
            for target, verb in targets[id(sentence)]
        ]
        n_detection = min(settings.detection_sentences, len(sentences))
    else:
        fixed_rows = [
            sentence_row(encoded_by_id[id(s)], s.detection, [target for target, _ in targets[id(s)]]) for s in data.train
        ]
        n_detection = 0  # every sentence row trains detection
    n_predicates = sum(len(targets[id(sentence)]) for sentence in data.train)
    counts["words_truncated"] = sum(piece < 0 for item in encoded for piece in item.word_pieces)
    counts["sentences_truncated"] = sum(any(piece < 0 for piece in item.word_pieces) for item in encoded)
    target_device = select_device(device)
    precision = resolve_precision(precision, target_device)
    optimizer = optimizer_for(network, settings.encoder_lr, settings.head_lr, settings.weight_decay)
    steps_per_epoch = math.ceil((len(fixed_rows) + n_detection) / settings.batch_sentences)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, linear_schedule(steps_per_epoch * settings.epochs, settings.warmup_fraction)
    )
    LOG.info(
        "training on %d rows (%d predicates) + %d detection rows per epoch (%d steps), %d templates (%.1f%% of questions kept), "
        "device %s, %s",
        len(fixed_rows),
        n_predicates,
        n_detection,
        steps_per_epoch,
        len(vocabulary),
        100 * vocabulary.coverage(),
        target_device,
        precision,
    )
    epochs = []
    for epoch in range(1, settings.epochs + 1):
        network.train()
        epoch_start = time.perf_counter()
        totals: Counter[str] = Counter()
        detection_rows = [
            sentence_row(encoded[i], sentences[i].detection) for i in sorted(rng.sample(range(len(sentences)), n_detection))
        ]
        rows_this_epoch = fixed_rows + detection_rows
        batches = bucketed_batches([len(row.input_ids) for row in rows_this_epoch], settings.batch_sentences, rng)
        for step, indices in enumerate(batches, start=1):
            batch = make_batch([rows_this_epoch[i] for i in indices])
            with autocast_context(precision, target_device):
                losses = {name: value.float() for name, value in network.losses(batch.to(target_device)).items()}
            loss = losses["detection"] + losses["arguments"] + settings.template_loss_weight * losses["templates"]
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for p in network.parameters() if p.requires_grad], settings.grad_clip)
            optimizer.step()
            scheduler.step()
            totals.update({name: value.item() for name, value in losses.items()})
            if step % settings.log_every == 0 or step == len(batches):
                LOG.info(
                    "epoch %d step %d/%d loss %.4f (%.0fs)",
                    epoch,
                    step,
                    len(batches),
                    sum(totals.values()) / step,
                    time.perf_counter() - epoch_start,
                )
        record: dict[str, Any] = {
            "epoch": epoch,
            **{f"loss_{name}": value / len(batches) for name, value in totals.items()},
            "train_seconds": time.perf_counter() - epoch_start,
        }
        validation_start = time.perf_counter()
        record.update(validate(parser, data))
        record["validation_seconds"] = time.perf_counter() - validation_start
        LOG.info("epoch %d: %s", epoch, {k: round(v, 4) for k, v in record.items() if isinstance(v, float)})
        epochs.append(record)
    network.eval()
    tuning = {}
    if settings.tune_decoding:
        for name, kind, held_out in (("nominal", KIND_NOMINAL, data.validation), ("verbal", KIND_VERBAL, data.verbal_validation)):
            if held_out:
                tuning[name] = tune_parser_decoding(parser, held_out, kind)
                LOG.info("decoding %s: %s", name, tuning[name]["chosen"])
    log = {
        "settings": asdict(settings),
        "epochs": epochs,
        "decoding_tuning": tuning,
        "validation_tuned": validate(parser, data) if tuning else {},
        "counts": {
            **data.counts,
            **dict(counts),
            "train_sentences": len(sentences),
            "rows_per_epoch": len(fixed_rows) + n_detection,
            "predicates_per_epoch": n_predicates,
        },
        "templates": len(vocabulary),
        "template_coverage": vocabulary.coverage(),
        "device": str(target_device),
        "precision": precision,
        "torch_threads": torch.get_num_threads(),
        "total_seconds": time.perf_counter() - started,
        "trainable_parameters": sum(p.numel() for p in network.parameters() if p.requires_grad),
    }
    return parser, log
