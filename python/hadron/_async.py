"""AsyncLLM: vLLM's asyncio interface. Each generate() call streams one request's
RequestOutputs (cumulative text and tokens, as vLLM's default output kind); the waiting runs
in a worker thread so the event loop stays free."""

import asyncio
from typing import AsyncIterator, Dict, Optional

from . import _hadron
from ._llm import LLM, _POLL_MS
from ._outputs import RequestOutput, apply_output
from ._sampling import SamplingParams


class AsyncLLM:
    """vLLM's AsyncLLM; the keywords are LLM's."""

    def __init__(self, model: Optional[str] = None, **kwargs):
        self._llm = LLM(model, **kwargs)
        self._running: Dict[str, int] = {}  # request_id -> the engine's id

    @classmethod
    def from_engine_args(cls, engine_args) -> "AsyncLLM":
        """From any object with vLLM's EngineArgs attributes (model, max_model_len, ...)."""
        args = dict(vars(engine_args))
        return cls(args.pop("model", None), **{k: v for k, v in args.items() if v is not None})

    async def generate(self, prompt, sampling_params: Optional[SamplingParams] = None,
                       request_id: Optional[str] = None) -> AsyncIterator[RequestOutput]:
        llm = self._llm
        text, ids = llm._prompt(prompt)
        params = sampling_params or SamplingParams()
        if request_id is None:
            request_id = f"async-{llm._next_id}"
        if request_id in self._running:
            raise ValueError(f"request_id {request_id!r} is already running")
        engine_id, request = await asyncio.to_thread(llm._submit, text, ids, params)
        request.request_id = request_id
        self._running[request_id] = engine_id
        try:
            while True:
                try:
                    output = await asyncio.to_thread(llm._engine.poll, engine_id, _POLL_MS)
                except _hadron.RequestGone:
                    return
                if output is None:
                    continue
                apply_output(request, output)
                yield request
                if request.finished:
                    return
        finally:  # finished, cancelled, or the consumer stopped early
            self._running.pop(request_id, None)
            if not request.finished:
                llm._engine.abort(engine_id)

    async def abort(self, request_id: str) -> None:
        engine_id = self._running.pop(request_id, None)
        if engine_id is not None:
            self._llm._engine.abort(engine_id)

    def metrics(self) -> dict:
        return self._llm.metrics()

    def shutdown(self) -> None:
        self._llm.close()
