"""`hf_yesno`: a seq2seq model asked SCALE's yes/no question; support = P("Yes") of its first token.

SCALE (Lattimer et al., 2023; asappresearch/scale-score, `scale_score/utils.py`) prompts Flan-T5 with

    {premise} Question: Does this imply that "{hypothesis}"? Yes or no?

and reads the first decoding step: the softmax over the logits of the first word piece of "Yes"
and of "No", P("Yes") being the support. MiniCheck-style and other instruction-tuned seq2seq
checkers answer the same question, so any hub id or local folder of an encoder-decoder model is
read this way (`factlab.models.loading.load_pair_scorer` picks this adapter for every
encoder-decoder config), one parameter away for online users.

The prompt reaches the engine as a `PairTemplate`: the premise's word pieces, then the rest of the
prompt with the hypothesis in it tokenised as one text (`hypothesis_format`), then the end-of-sequence
token. That is SCALE's own encoding of a window (`get_chunks`: premise tokens, then the tokens of the
prompt's remainder with the hypothesis filled in), so the engine cuts the premise to `max_length`
exactly where SCALE would cut a window, and counts the cut as it does for every model.
"""

from __future__ import annotations

from typing import Any

import torch

from factlab.errors import FactlabError
from factlab.models.engine import PairTemplate
from factlab.runtime import select_device

PROMPT_BEFORE_HYPOTHESIS = ' Question: Does this imply that "'  # between the premise and the hypothesis
PROMPT_AFTER_HYPOTHESIS = '"? Yes or no?'
YES, NO = "Yes", "No"
UNBOUNDED = 10**6  # tokenizers without a declared maximum report a huge model_max_length
FALLBACK_MAX_LENGTH = 512


def prompt(premise: str, hypothesis: str) -> str:
    """SCALE's prompt as one string (what the template's pieces spell out)."""
    return f"{premise}{PROMPT_BEFORE_HYPOTHESIS}{hypothesis}{PROMPT_AFTER_HYPOTHESIS}"


def first_piece(tokenizer: Any, word: str) -> int:
    """The first word piece of `word` (SCALE: `tokenizer(word).input_ids[0]`)."""
    ids = tokenizer(word, add_special_tokens=False)["input_ids"]
    if not ids or ids[0] == tokenizer.unk_token_id:
        raise FactlabError(f"the yes/no model's tokenizer has no word piece for {word!r}")
    return int(ids[0])


def prompt_template(tokenizer: Any) -> PairTemplate:
    """SCALE's prompt around (premise, hypothesis), ending with the tokenizer's end-of-sequence token."""
    end = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
    after_premise = PROMPT_BEFORE_HYPOTHESIS + "{hypothesis}" + PROMPT_AFTER_HYPOTHESIS
    return PairTemplate([], [], end, 0, 0, hypothesis_format=after_premise)


class HubYesNoScorer:
    """A seq2seq model from the hub or a folder: support = softmax(first-token logits of Yes, No)[Yes]."""

    def __init__(self, model_name_or_path: str, device: str = "auto", max_length: int = 0) -> None:
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        try:
            self.tokenizer = AutoTokenizer.from_pretrained(model_name_or_path)
            model = AutoModelForSeq2SeqLM.from_pretrained(model_name_or_path)
        except OSError as error:
            raise FactlabError(f"cannot load yes/no model {model_name_or_path!r}: {error}".splitlines()[0]) from error
        start = model.config.decoder_start_token_id
        if start is None:
            raise FactlabError(f"yes/no model {model_name_or_path!r} declares no decoder_start_token_id")
        self.decoder_start = int(start)
        self.yes_no = [first_piece(self.tokenizer, YES), first_piece(self.tokenizer, NO)]
        if self.yes_no[0] == self.yes_no[1]:
            raise FactlabError(f"yes/no model {model_name_or_path!r}: 'Yes' and 'No' start with the same word piece")
        self.template = prompt_template(self.tokenizer)
        self.device = select_device(device)
        self.model = model.to(self.device).eval()
        declared = getattr(self.tokenizer, "model_max_length", 0) or 0
        self.max_length = max_length or (declared if 0 < declared < UNBOUNDED else FALLBACK_MAX_LENGTH)
        self.identity = f"hub_yesno:{model_name_or_path}"

    def support(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None) -> torch.Tensor:
        # one decoding step from the decoder's start token: what generate(max_new_tokens=1) scores
        decoder_input_ids = torch.full((input_ids.shape[0], 1), self.decoder_start, dtype=torch.long, device=input_ids.device)
        logits = self.model(input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids).logits
        return torch.softmax(logits[:, 0, self.yes_no].float(), dim=-1)[:, 0]


def is_seq2seq(model_name_or_path: str) -> bool:
    """Whether a hub id or folder holds an encoder-decoder model (read as a yes/no model)."""
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(model_name_or_path)
    except (OSError, ValueError) as error:
        message = f"cannot load model {model_name_or_path!r} (no aligner.json, and no config a hub model would have): {error}"
        raise FactlabError(message.splitlines()[0]) from error
    return bool(getattr(config, "is_encoder_decoder", False))
