from factlab.data.adapters.qags import adapt_qags
from factlab.data.schema import validate_benchmark


def test_qags_counts_match_mirror_readme(raw):
    cnndm = validate_benchmark(adapt_qags(raw, "cnndm").frame, "qags_cnndm")
    xsum = validate_benchmark(adapt_qags(raw, "xsum").frame, "qags_xsum")
    assert len(cnndm) == 714 and cnndm["doc_id"].nunique() == 235
    assert len(xsum) == 239 and xsum["doc_id"].nunique() == 239
    assert cnndm["votes"].map(len).eq(3).all()


def test_qags_label_is_majority_of_yes_votes(raw):
    frame = adapt_qags(raw, "xsum").frame
    majority = frame["votes"].map(lambda v: int(sum(v) >= 2))
    assert (frame["label"] == majority).all()
    assert frame["human_score"].between(0, 1).all()
