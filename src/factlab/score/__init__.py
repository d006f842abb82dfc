"""Scoring: factlab's scorers over preprocessed benchmarks, through one inference engine (factlab.models.engine)."""
