"""Counts stated in the mirror README (../shared/mirror/README.md), shared by the tests."""

# TRUE sets mirrored as CSVs (true_benchmark_scale_copy).
TRUE_COUNTS = {
    "begin": 836,
    "dialfact": 8689,
    "frank": 671,
    "paws": 8000,
    "q2": 1088,
    "qags_cnndm": 235,
    "qags_xsum": 239,
    "summeval": 1600,
}

# WiCE claims (entailment_retrieval/claim): per split, supported / partially_supported / not_supported.
WICE_CLAIM_LABELS = {
    "dev": {"supported": 115, "partially_supported": 191, "not_supported": 43},
    "test": {"supported": 111, "partially_supported": 215, "not_supported": 32},
}
# WiCE token localisation (non_supported_tokens), train: subclaims, tokens, unsupported tokens.
WICE_SUBCLAIMS_TRAIN = {"rows": 374, "tokens": 4801, "unsupported_tokens": 1320}
# The same, dev and test (the wice_tokens localisation benchmark).
WICE_TOKENS = {
    "dev": {"rows": 124, "tokens": 1614, "unsupported_tokens": 406},
    "test": {"rows": 105, "tokens": 1514, "unsupported_tokens": 407},
}
# FactCG CG2C_doc.json: document–claim pairs, supported ones, documents.
FACTCG_CG2C_DOC = {"pairs": 2068, "supported": 1034, "documents": 1656}
# HaluEval QA: questions per file (the same in both), and how many hallucinated answers differ between the files.
HALUEVAL_QA = {"questions": 500, "different_hallucinated": 487}
# CLIMATE-FEVER: claims and claim–evidence pairs.
CLIMATE_FEVER = {"claims": 1535, "pairs": 7675}
