"""The exported checker as a plain `transformers` model (copied into the export as `modeling_factlab.py`).

Load it with `AutoModelForSequenceClassification.from_pretrained(folder, trust_remote_code=True)` or
`pipeline("text-classification", model=folder, trust_remote_code=True)` on {"text": premise, "text_pair":
hypothesis}: the logits are the aligner's 3-way head (entailment, neutral, contradiction) over the mean of the
encoder's last hidden states, as factlab scores pairs. The folder's configuration is the encoder's own (a BERT or
MPNet configuration, with the head's labels), so only this class is remote code. This file imports only torch and
transformers.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from transformers import AutoConfig, AutoModel, PretrainedConfig, PreTrainedModel
from transformers.modeling_outputs import SequenceClassifierOutput


class FactlabAlignerForSequenceClassification(PreTrainedModel):
    config_class = PretrainedConfig  # the encoder's own configuration class (AutoConfig picks it by model type)
    base_model_prefix = "encoder"

    def __init__(self, config: PretrainedConfig) -> None:
        super().__init__(config)
        encoder_config = config if config.model_type else AutoConfig.for_model(**config.to_dict())
        try:  # BERT-like encoders build a pooler unless told not to; the head pools by the mean
            self.encoder = AutoModel.from_config(encoder_config, add_pooling_layer=False)
        except TypeError:
            self.encoder = AutoModel.from_config(encoder_config)
        self.three_way = nn.Linear(encoder_config.hidden_size, 3)
        self.post_init()

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        **kwargs: Any,
    ) -> SequenceClassifierOutput:
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            inputs["token_type_ids"] = token_type_ids
        hidden = self.encoder(**inputs).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        logits = self.three_way(pooled)
        loss = nn.functional.cross_entropy(logits, labels) if labels is not None else None
        return SequenceClassifierOutput(loss=loss, logits=logits)
