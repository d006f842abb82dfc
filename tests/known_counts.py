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
