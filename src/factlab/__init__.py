"""factlab: reproducible factual-consistency evaluation."""

__version__ = "0.1.0"
