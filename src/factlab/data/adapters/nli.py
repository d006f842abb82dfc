"""NLI training corpora in the canonical schema: premise -> `source`, hypothesis -> `output`.

`label` = 1 iff the pair is an entailment. `nli_label` keeps the corpus's own granularity in one
vocabulary: entailment / neutral / contradiction for the 3-way sets (ANLI, SICK), entailment /
not_entailment for the binary ones (DocNLI's binary MNLI and FEVER-NLI, MCTest-NLI, RTE; MCTest's
upstream "non_entailment" is renamed). `doc_id` is a short hash of the premise, the same in every
corpus, so overlap with evaluation material can be checked by premise; `system` is the corpus.

Upstream layouts (all checked against the counts in the mirror README):
- DocNLI `Data/binary-{MNLI,FEVER-NLI}/{dev,test}.txt` and `Data/MCTest-NLI/mc{160,500}.{split}_in_entail.txt`:
  no header, `label \t premise \t hypothesis`. Lines are split on tabs only: quote characters are
  text, never CSV quoting (which is what breaks naive readers on RTE's test.tsv).
- ANLI v1.0 `R{1,2,3}/{dev,test}.jsonl` with labels e/n/c; `round` is kept.
- SICK 2014 `SICK_{train,trial,test_annotated}.txt`: header, 3-way judgement and a 1-5
  relatedness score (kept as `relatedness`). SemEval-2014's trial set is its development set,
  so split "trial" is named "dev" here.
- RTE as re-split by AttAttr-Cutoff: `{train,dev,test}.tsv` are a re-split of the official RTE
  train+dev (2,490 + 277 = 2,767 pairs, indices 0-2766 across the three files). Its test.tsv is
  labelled (unlike GLUE's), so all three files are read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from factlab.data.ids import text_hash
from factlab.data.readers import iter_jsonl, require
from factlab.data.spec import BenchmarkSpec, Built
from factlab.download.manifest import RawFiles
from factlab.errors import DataError

DOCNLI = "nli_docnli_binary"
BINARY_LABELS = {"entailment": "entailment", "not_entailment": "not_entailment"}
MCTEST_LABELS = {"entailment": "entailment", "non_entailment": "not_entailment"}
ANLI_LABELS = {"e": "entailment", "n": "neutral", "c": "contradiction"}
SICK_LABELS = {"ENTAILMENT": "entailment", "NEUTRAL": "neutral", "CONTRADICTION": "contradiction"}
SICK_FILES = {"train": "SICK_train.txt", "dev": "SICK_trial.txt", "test": "SICK_test_annotated.txt"}
SICK_HEADER = ("pair_ID", "sentence_A", "sentence_B", "relatedness_score", "entailment_judgment")
RTE_HEADER = ("index", "sentence1", "sentence2", "label")
MCTEST_NAME = re.compile(r"(?P<subset>mc160|mc500)\.(?P<split>train|dev|test)_in_entail\.txt")
ANLI_PATH = re.compile(r"R(?P<round>[123])/(?P<split>dev|test)\.jsonl$")


def premise_id(premise: str) -> str:
    """A short, stable id of the premise text (64 bits of sha1: collisions are negligible)."""
    return text_hash(premise, length=16)


def iter_tab_lines(path: Path, n_fields: int) -> Iterator[tuple[int, list[str]]]:
    """Yield (line number, fields) of a tab-separated file with exactly `n_fields` per line.

    Splits on "\\n" only (a stray \\r or \\x85 inside a text stays text) and drops a trailing
    \\r of CRLF files; quotes are ordinary characters (csv.QUOTE_NONE semantics).
    """
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for line_no, line in enumerate(lines, start=1):
        fields = line.removesuffix("\r").split("\t")
        if len(fields) != n_fields:
            raise DataError(f"expected {n_fields} tab-separated fields, found {len(fields)}", file=path, record=f"line {line_no}")
        yield line_no, fields


def iter_tab_records(path: Path, header: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """Like `iter_tab_lines` for files with a header row, which must equal `header`."""
    lines = iter_tab_lines(path, len(header))
    first = next(lines, None)
    if first is None or tuple(first[1]) != header:
        raise DataError(f"header is not {list(header)}", file=path, record="line 1")
    for line_no, fields in lines:
        yield line_no, dict(zip(header, fields, strict=True))


def canonical_label(value: str, vocabulary: Mapping[str, str], *, file: Path, record: str) -> str:
    if value not in vocabulary:
        raise DataError(f"label {value!r} is not one of {sorted(vocabulary)}", file=file, record=record, field="label")
    return vocabulary[value]


def is_repeat(
    first: Mapping[tuple[str, str], Mapping[str, Any]],
    key: tuple[str, str],
    label: str,
    what: str,
    *,
    file: Path,
    record: str,
    field: str,
    label_column: str = "nli_label",
) -> bool:
    """Whether the (source, output) `key` was kept before (`first`: key -> kept row) with the same `label`
    (its `label_column`): the repeat is dropped and counted by the caller. The same pair with another
    label is an error."""
    kept = first.get(key)
    if kept is None:
        return False
    if kept[label_column] != label:
        message = f"the same {what} are {label} here but {kept[label_column]} in {kept['example_id']}"
        raise DataError(message, file=file, record=record, field=field)
    return True


def nli_row(
    example_id: str, corpus: str, split: str, premise: str, hypothesis: str, nli_label: str, *, file: Path, record: str
) -> dict[str, Any]:
    """One canonical row; empty texts are errors (they cannot be scored)."""
    for field, text in (("premise", premise), ("hypothesis", hypothesis)):
        if not text.strip():
            raise DataError("empty text", file=file, record=record, field=field)
    return {
        "example_id": example_id,
        "doc_id": premise_id(premise),
        "system": corpus,
        "split": split,
        "source": premise,
        "output": hypothesis,
        "label": int(nli_label == "entailment"),
        "nli_label": nli_label,
    }


def built_with_counts(rows: list[dict[str, Any]], group: str = "split") -> Built:
    frame = pd.DataFrame(rows)
    counts = {"read": len(frame)}
    counts.update({f"read_{key}": int(n) for key, n in frame[group].value_counts().sort_index().items()})
    return Built(frame, counts)


def read_labelled_lines(path: Path, vocabulary: Mapping[str, str]) -> Iterator[tuple[int, str, str, str]]:
    """(line number, premise, hypothesis, canonical label) of a DocNLI `label\\tpremise\\thypothesis` file."""
    for line_no, (label, premise, hypothesis) in iter_tab_lines(path, 3):
        yield line_no, premise, hypothesis, canonical_label(label, vocabulary, file=path, record=f"line {line_no}")


def adapt_docnli_binary(raw: RawFiles, folder: str, corpus: str) -> Built:
    """DocNLI's binary MNLI or FEVER-NLI: dev and test files (their train files are not mirrored)."""
    rows = []
    for split in ("dev", "test"):
        path = raw.path(DOCNLI, f"Data/{folder}/{split}.txt")
        for line_no, premise, hypothesis, label in read_labelled_lines(path, BINARY_LABELS):
            example_id = f"{corpus}-{split}-{line_no:05d}"
            rows.append(nli_row(example_id, corpus, split, premise, hypothesis, label, file=path, record=f"line {line_no}"))
    return built_with_counts(rows)


def adapt_mctest(raw: RawFiles) -> Built:
    """MCTest-NLI: each story with its question+answer statements (1 entailed, 3 not, per question)."""
    rows = []
    for path in raw.glob(DOCNLI, "Data/MCTest-NLI/"):
        match = MCTEST_NAME.fullmatch(path.name)
        if match is None:
            raise DataError("unexpected MCTest-NLI file name", file=path)
        subset, split = match["subset"], match["split"]
        for line_no, premise, hypothesis, label in read_labelled_lines(path, MCTEST_LABELS):
            row = nli_row(
                f"mctest-{subset}-{split}-{line_no:04d}",
                "mctest",
                split,
                premise,
                hypothesis,
                label,
                file=path,
                record=f"line {line_no}",
            )
            rows.append(row | {"subset": subset})
    if not rows:
        raise DataError("no MCTest-NLI files in the manifest", record=DOCNLI)
    return built_with_counts(rows)


def adapt_anli(raw: RawFiles) -> Built:
    """ANLI v1.0 rounds 1-3, dev and test; `tag` (e.g. "r2_dev") must agree with the file."""
    rows = []
    for path in raw.glob("nli_anli_v1.0_devtest", ".jsonl"):
        match = ANLI_PATH.search(path.as_posix())
        if match is None:
            raise DataError("unexpected ANLI file path", file=path)
        round_no, split = int(match["round"]), match["split"]
        for line_no, record in iter_jsonl(path):
            where = f"line {line_no}"
            tag = require(record, "tag", file=path, record_id=where)
            if tag != f"r{round_no}_{split}":
                raise DataError(f"tag {tag!r} disagrees with the file", file=path, record=where, field="tag")
            label = canonical_label(require(record, "label", file=path, record_id=where), ANLI_LABELS, file=path, record=where)
            premise = require(record, "context", file=path, record_id=where)
            hypothesis = require(record, "hypothesis", file=path, record_id=where)
            example_id = f"anli-{require(record, 'uid', file=path, record_id=where)}"
            row = nli_row(example_id, "anli", split, premise, hypothesis, label, file=path, record=where)
            rows.append(row | {"round": round_no, "genre": record.get("genre")})
    return built_with_counts(rows)


def parse_relatedness(value: str, *, file: Path, record: str) -> float:
    try:
        score = float(value)
    except ValueError as error:
        raise DataError(f"relatedness {value!r} is not a number", file=file, record=record, field="relatedness_score") from error
    if not 1.0 <= score <= 5.0:
        raise DataError(f"relatedness {score} is outside 1-5", file=file, record=record, field="relatedness_score")
    return score


def adapt_sick(raw: RawFiles) -> Built:
    rows = []
    for split, name in SICK_FILES.items():
        path = raw.path("nli_sick2014", f"sick2014/{name}")
        for line_no, record in iter_tab_records(path, SICK_HEADER):
            where = f"line {line_no}"
            label = canonical_label(record["entailment_judgment"], SICK_LABELS, file=path, record=where)
            row = nli_row(
                f"sick-{record['pair_ID']}",
                "sick",
                split,
                record["sentence_A"],
                record["sentence_B"],
                label,
                file=path,
                record=where,
            )
            rows.append(row | {"relatedness": parse_relatedness(record["relatedness_score"], file=path, record=where)})
    return built_with_counts(rows)


def adapt_rte(raw: RawFiles) -> Built:
    rows = []
    for split in ("train", "dev", "test"):
        path = raw.path("nli_rte_resplit", f"glue_data/RTE/{split}.tsv")
        for line_no, record in iter_tab_records(path, RTE_HEADER):
            where = f"line {line_no}"
            label = canonical_label(record["label"], BINARY_LABELS, file=path, record=where)
            rows.append(
                nli_row(
                    f"rte-{record['index']}",
                    "rte",
                    split,
                    record["sentence1"],
                    record["sentence2"],
                    label,
                    file=path,
                    record=where,
                )
            )
    return built_with_counts(rows)


def nli_spec(name: str, datasets: tuple[str, ...], build: Any, description: str) -> BenchmarkSpec:
    return BenchmarkSpec(name=name, datasets=datasets, build=build, kind="benchmark", role="training", description=description)


SPECS = [
    nli_spec(
        "nli_mnli_binary",
        (DOCNLI,),
        partial(adapt_docnli_binary, folder="binary-MNLI", corpus="mnli"),
        "MNLI dev/test relabelled entailment vs not_entailment (DocNLI release)",
    ),
    nli_spec(
        "nli_fever_binary",
        (DOCNLI,),
        partial(adapt_docnli_binary, folder="binary-FEVER-NLI", corpus="fever"),
        "FEVER-NLI dev/test relabelled entailment vs not_entailment (DocNLI release)",
    ),
    nli_spec("nli_mctest", (DOCNLI,), adapt_mctest, "MCTest stories vs question+answer statements (DocNLI's MCTest-NLI)"),
    nli_spec("nli_anli", ("nli_anli_v1.0_devtest",), adapt_anli, "Adversarial NLI v1.0, rounds 1-3, dev and test"),
    nli_spec("nli_sick", ("nli_sick2014",), adapt_sick, "SICK 2014 sentence pairs: 3-way entailment and relatedness"),
    nli_spec(
        "nli_rte", ("nli_rte_resplit",), adapt_rte, "RTE (official train+dev) as re-split into train/dev/test by AttAttr-Cutoff"
    ),
]
