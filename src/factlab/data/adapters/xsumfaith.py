"""XSumFaith (Maynez et al., 2020): factuality votes on XSum summaries of 4 systems.

One row per (BBC article, system) pair of `factuality_annotations_xsum_summaries.csv`, where
up to 3 workers answered `is_factual` yes/no. label = strict majority of "yes" (1 = factual;
a 1-1 tie between two votes is 0); human_score = share of "yes"; `votes` (1 = yes) and
`worker_ids` keep the raw answers. The summary text is the file's `summary` column.

Which pairs are there: Maynez et al. asked the factuality question only for summaries in which
at least one worker had marked a hallucinated span, so the summaries nobody marked (131 of the
2,000 system summaries) are not in this file. The gold summaries are not in it either. Pairs whose
every `is_factual` is "NULL" cannot be labelled: dropped and counted (`dropped_no_votes`).

The release has no articles. They are joined by BBC id from, in order of preference,
SummaC's `data/xsumfaith.json` (sentences on separate lines), AggreFact's
`CLIFF_error_types.csv` (xsum rows; `id` is the BBC id) and FRANK's per-article JSONs (the hash
of a BBC article is its id; the text may start with page boilerplate). Pairs whose article is in
none of them are dropped and counted (`dropped_no_article`); `article_source` says where each
row's article came from. `doc_id` is the BBC id, as in the `frank` benchmark's XSum rows.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from factlab.data.adapters.frank import read_articles
from factlab.data.readers import read_json, read_text_csv, require
from factlab.data.spec import BenchmarkSpec, Built
from factlab.download.manifest import RawFiles
from factlab.errors import DataError

FACTUALITY_FILE = "factuality_annotations_xsum_summaries.csv"
SUMMAC_FILE = "data/xsumfaith.json"
CLIFF_FILE = "CLIFF_error_types.csv"
SYSTEMS = ("BERTS2S", "PtGen", "TConvS2S", "TranS2S")
VOTE_VALUES = {"yes": 1, "no": 0}
# How the file writes "this worker gave no answer" (11 pairs have only these).
NO_ANSWER = ("NULL", "")
PAIR_KEY = ["bbcid", "system"]


def read_factuality(raw: RawFiles) -> pd.DataFrame:
    """One row per worker answer, all as strings, plus `vote` (1 = yes, 0 = no, <NA> = no answer)."""
    path = raw.path("xsumfaith", FACTUALITY_FILE)
    table = read_text_csv(path)
    missing = [c for c in [*PAIR_KEY, "summary", "is_factual", "worker_id"] if c not in table.columns]
    if missing:
        raise DataError(f"missing column(s) {missing}", file=path, field=missing[0])
    unknown = ~table["system"].isin(SYSTEMS)
    if unknown.any():
        row = int(unknown.to_numpy().argmax())
        message = f"unknown system {table['system'].iloc[row]!r}"
        raise DataError(message, file=path, record=f"row {row + 2}", field="system")
    answer = table["is_factual"].str.strip()
    bad_vote = ~(answer.str.lower().isin(list(VOTE_VALUES)) | answer.isin(NO_ANSWER))
    if bad_vote.any():
        row = int(bad_vote.to_numpy().argmax())
        message = f"vote {table['is_factual'].iloc[row]!r} is not yes/no"
        raise DataError(message, file=path, record=f"row {row + 2}", field="is_factual")
    table["vote"] = answer.str.lower().map(VOTE_VALUES).astype("Int8")
    return table


def one_text_per_id(pairs: list[tuple[str, str]], *, file: str) -> dict[str, str]:
    """bbcid -> article; several summaries share an article, and they must agree on its text."""
    articles: dict[str, str] = {}
    for bbcid, document in pairs:
        if articles.setdefault(bbcid, document) != document:
            raise DataError("two different documents for one bbcid", file=file, record=bbcid)
    return articles


def summac_articles(raw: RawFiles) -> dict[str, str]:
    path = raw.path("summac_benchmark_pr15_subset", SUMMAC_FILE)
    records = read_json(path)
    pairs = [
        (str(require(record, "bbcid", file=path, record_id=key)), require(record, "document", file=path, record_id=key))
        for key, record in records.items()
    ]
    return one_text_per_id(pairs, file=str(path))


def cliff_articles(raw: RawFiles) -> dict[str, str]:
    path = raw.path("aggrefact_partial", CLIFF_FILE)
    table = read_text_csv(path)
    xsum = table[table["origin"] == "xsum"]
    return one_text_per_id(list(zip(xsum["id"], xsum["doc"], strict=True)), file=str(path))


def frank_articles(raw: RawFiles) -> dict[str, str]:
    # FRANK keys CNN/DM articles by 40-hex hashes, which cannot collide with numeric BBC ids.
    # A record without article text is left out, so its pairs count as `dropped_no_article`.
    return {
        doc_hash: record["article"] for doc_hash, record in read_articles(raw).items() if isinstance(record.get("article"), str)
    }


ARTICLE_SOURCES: tuple[tuple[str, Callable[[RawFiles], dict[str, str]]], ...] = (
    ("summac", summac_articles),
    ("cliff", cliff_articles),
    ("frank", frank_articles),
)


def adapt_xsumfaith(raw: RawFiles) -> Built:
    path = raw.path("xsumfaith", FACTUALITY_FILE)
    answers = read_factuality(raw)
    sources = [(name, load(raw)) for name, load in ARTICLE_SOURCES]
    counts = {"read": len(answers), "pairs": 0, "dropped_no_votes": 0, "dropped_no_article": 0, "tied_votes": 0}
    counts.update({f"pairs_from_{name}": 0 for name, _ in sources})
    rows = []
    for (bbcid, system), group in answers.groupby(PAIR_KEY, sort=False):
        counts["pairs"] += 1
        record_id = f"bbcid {bbcid} system {system}"
        summaries = group["summary"].unique()
        if len(summaries) != 1:
            raise DataError("workers of one pair saw different summaries", file=path, record=record_id, field="summary")
        answered = group[group["vote"].notna()]
        if answered.empty:
            counts["dropped_no_votes"] += 1
            continue
        found = next(((name, texts[bbcid]) for name, texts in sources if bbcid in texts), None)
        if found is None:
            counts["dropped_no_article"] += 1
            continue
        article_source, article = found
        counts[f"pairs_from_{article_source}"] += 1
        votes = [int(vote) for vote in answered["vote"]]
        counts["tied_votes"] += 2 * sum(votes) == len(votes)
        rows.append(
            {
                "example_id": f"xsumfaith-{bbcid}-{system}",
                "doc_id": bbcid,
                "system": system,
                "split": "test",
                "source": article,
                "output": summaries[0],
                "label": int(2 * sum(votes) > len(votes)),
                "human_score": sum(votes) / len(votes),
                "votes": votes,
                "worker_ids": list(answered["worker_id"]),
                "article_source": article_source,
            }
        )
    frame = pd.DataFrame(rows)
    counts["rows"] = len(frame)
    counts["articles"] = int(frame["doc_id"].nunique())
    for name, _ in sources:
        counts[f"articles_from_{name}"] = int(frame.loc[frame["article_source"] == name, "doc_id"].nunique())
    labelled = answers.loc[answers["vote"].notna(), "bbcid"]
    counts["articles_without_text"] = int(labelled.nunique()) - counts["articles"]
    return Built(frame, counts)


SPECS = [
    BenchmarkSpec(
        name="xsumfaith",
        datasets=("xsumfaith", "summac_benchmark_pr15_subset", "aggrefact_partial", "frank"),
        build=adapt_xsumfaith,
        description="XSumFaith factuality votes (3 workers) on 4 systems' XSum summaries, articles joined",
    )
]
