"""Models factlab trains or wraps: the QASem parser, NLI/alignment backbones."""
