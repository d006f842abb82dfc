"""Train stage: factlab's own models, written under results/models/ (today: the QASem parser)."""
