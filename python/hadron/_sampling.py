"""SamplingParams with vLLM's names, sent to the engine as JSON (validated there, as the HTTP
server validates a request's fields)."""

import json
from dataclasses import dataclass, field, fields
from typing import Dict, List, Optional, Union

_NUMBERS = (
    "temperature", "top_p", "min_p", "presence_penalty", "frequency_penalty",
    "repetition_penalty",
)
_INTEGERS = ("n", "top_k", "seed", "max_tokens", "min_tokens", "logprobs", "best_of")


@dataclass
class SamplingParams:
    """vLLM's SamplingParams. Fields left None take the model's generation_config.json, then
    vLLM's defaults (temperature 1, top_p 1, top_k off, max_tokens 16)."""

    n: int = 1
    best_of: Optional[int] = None
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    repetition_penalty: float = 1.0
    temperature: Optional[float] = None
    top_p: Optional[float] = None
    top_k: Optional[int] = None
    min_p: float = 0.0
    seed: Optional[int] = None
    stop: Optional[Union[str, List[str]]] = None
    stop_token_ids: Optional[List[int]] = None
    ignore_eos: bool = False
    max_tokens: Optional[int] = 16
    min_tokens: int = 0
    logprobs: Optional[int] = None
    prompt_logprobs: Optional[int] = None
    detokenize: bool = True
    skip_special_tokens: bool = True
    spaces_between_special_tokens: bool = True
    include_stop_str_in_output: bool = False
    logit_bias: Optional[Dict[int, float]] = None
    extra_args: Optional[dict] = field(default=None, repr=False)

    def __post_init__(self):
        for name in _NUMBERS + _INTEGERS:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"SamplingParams.{name} must be a number, not {type(value).__name__}")
            if name in _INTEGERS and not float(value).is_integer():
                raise TypeError(f"SamplingParams.{name} must be an integer, not {value!r}")
        if self.stop is not None and not isinstance(self.stop, (str, list, tuple)):
            raise TypeError("SamplingParams.stop must be a string or a list of strings")
        for name, supported in (("prompt_logprobs", None), ("include_stop_str_in_output", False),
                                ("detokenize", True), ("spaces_between_special_tokens", True),
                                ("extra_args", None)):
            if getattr(self, name) != supported:
                raise ValueError(f"SamplingParams.{name}={getattr(self, name)!r} is not "
                                 "supported by hadron yet")

    def to_json(self) -> str:
        """The engine's JSON: every field that is set, with vLLM's names."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("prompt_logprobs", "detokenize", "spaces_between_special_tokens",
                          "include_stop_str_in_output", "extra_args"):
                continue
            if value is None and f.name != "max_tokens":
                continue
            if f.name == "stop" and isinstance(value, tuple):
                value = list(value)
            if f.name == "logit_bias":
                value = {str(int(k)): v for k, v in value.items()}
            if f.name in _INTEGERS and value is not None:
                value = int(value)
            out[f.name] = value
        return json.dumps(out)
