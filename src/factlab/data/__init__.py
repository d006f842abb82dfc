"""Download and canonical benchmarks: upstream files in, validated parquet out."""
