"""Download and canonical benchmarks: upstream files in, validated parquet out; and the leakage rule (`leakage`)
that keeps every evaluated text out of what factlab trains or fits on."""
