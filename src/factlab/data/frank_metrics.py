"""FRANK's baseline metrics (Pagnoni et al., 2021) exactly as its baseline file spells them, in its order: read by
its adapter (factlab.data.adapters.frank) and listed by the published-analysis commands, which import no pandas."""

BASELINE_METRICS = (
    "Rouge 1",
    "Rouge 2",
    "Rouge L",
    "Bleu",
    "Meteor",
    "BertScore P",
    "BertScore R",
    "BertScore F1",
    "BertScore P Art",
    "BertScore R Art",
    "BertScore F1 Art",
    "FactCC",
    "FEQA",
    "Dep Entail",
    "QAGS",
)
