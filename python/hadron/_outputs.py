"""Outputs shaped like vLLM's: RequestOutput holding one CompletionOutput per completion."""

from dataclasses import dataclass, field
from typing import Dict, List, Optional


@dataclass
class Logprob:
    logprob: float
    rank: Optional[int] = None
    decoded_token: Optional[str] = None


@dataclass
class CompletionOutput:
    index: int
    text: str = ""
    token_ids: List[int] = field(default_factory=list)
    cumulative_logprob: Optional[float] = None
    logprobs: Optional[List[Dict[int, Logprob]]] = None
    finish_reason: Optional[str] = None  # "stop", "length", "abort"; None while running
    stop_reason: Optional[object] = None

    def finished(self) -> bool:
        return self.finish_reason is not None


@dataclass
class RequestOutput:
    request_id: str
    prompt: Optional[str]
    prompt_token_ids: List[int]
    outputs: List[CompletionOutput]
    finished: bool = False
    prompt_logprobs: Optional[list] = None


def apply_output(request: RequestOutput, output) -> None:
    """Adds one engine output (the tuple of _hadron.Engine.poll) to its completion."""
    index, token_ids, text, finished, finish_reason, logprobs, top = output
    completion = request.outputs[index]
    completion.token_ids.extend(token_ids)
    completion.text += text
    if logprobs is not None:
        if completion.logprobs is None:
            completion.logprobs, completion.cumulative_logprob = [], 0.0
        for token, chosen, alternatives in zip(token_ids, logprobs, top):
            entry = {token_id: Logprob(lp, rank) for rank, (token_id, lp) in
                     enumerate(alternatives, start=1)}
            if token not in entry:
                entry[token] = Logprob(chosen)
            completion.logprobs.append(entry)
            completion.cumulative_logprob += chosen
    if finished:
        completion.finish_reason = finish_reason
    request.finished = all(c.finish_reason is not None for c in request.outputs)
