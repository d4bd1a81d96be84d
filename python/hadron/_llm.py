"""LLM: vLLM's offline entry point over one hadron engine (which runs on a thread of its own;
calls release the GIL while they wait, so several Python threads may generate at once)."""

import json
from typing import List, Optional, Sequence, Union

from . import _hadron
from ._outputs import CompletionOutput, RequestOutput, apply_output
from ._sampling import SamplingParams

# vLLM's LLM(...) keywords and the engine flag each becomes (a CLI flag of `hadron generate`).
_ENGINE_FLAGS = {
    "max_model_len": "max_model_len",
    "max_num_seqs": "max_num_seqs",
    "max_num_batched_tokens": "max_num_batched_tokens",
    "block_size": "block_size",
    "gpu_memory_utilization": "gpu_memory_utilization",
    "kv_cache_memory_bytes": "kv_cache_memory_bytes",
    "seed": "seed",
    "load_format": "load_format",
    "device": "device",
    "enforce_eager": "enforce_eager",
    "max_queued_requests": "max_queued_requests",
    "verbose": "verbose",
}
# Accepted for vLLM compatibility with these values only.
_FIXED = {"tensor_parallel_size": 1, "pipeline_parallel_size": 1, "trust_remote_code": None,
          "tokenizer": None, "dtype": None, "disable_log_stats": None}

_POLL_MS = 100  # how often a waiting call returns to Python (Ctrl-C is seen in between)


def _flag_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def engine_options(kwargs: dict, model: Optional[str]) -> dict:
    """The engine's key/value options from LLM's keywords; TypeError for unknown ones."""
    options = {}
    for name, value in kwargs.items():
        if name in _ENGINE_FLAGS:
            if value is not None:
                options[_ENGINE_FLAGS[name]] = _flag_value(value)
        elif name in _FIXED:
            fixed = _FIXED[name]
            if name == "tokenizer" and value not in (None, model):
                raise ValueError("tokenizer: hadron reads the tokenizer from the model folder")
            if fixed is not None and value not in (None, fixed):
                raise ValueError(f"{name}={value!r} is not supported by hadron yet (only {fixed})")
        else:
            raise TypeError(f"LLM() got an unexpected keyword argument '{name}'")
    return options


class LLM:
    """vLLM's LLM. model: a model folder (config.json, safetensors, tokenizer.json); None for
    hadron's shipped models/default."""

    def __init__(self, model: Optional[str] = None, **kwargs):
        if model is not None and not isinstance(model, str):
            raise TypeError("model must be a path (str)")
        self._engine = _hadron.Engine(model, engine_options(kwargs, model))
        self._next_id = 0

    # --- inputs -------------------------------------------------------------------------
    def _prompt(self, prompt):
        """(text or None, token ids) of one vLLM prompt: a string, {"prompt": str} or
        {"prompt_token_ids": [...]}."""
        if isinstance(prompt, str):
            return prompt, self._engine.tokenize(prompt, True)
        if isinstance(prompt, dict):
            if "prompt_token_ids" in prompt:
                ids = prompt["prompt_token_ids"]
                if not isinstance(ids, (list, tuple)) or not all(
                        isinstance(i, int) and not isinstance(i, bool) for i in ids):
                    raise TypeError("prompt_token_ids must be a list of integers")
                return prompt.get("prompt"), list(ids)
            if isinstance(prompt.get("prompt"), str):
                return prompt["prompt"], self._engine.tokenize(prompt["prompt"], True)
        raise TypeError("a prompt is a string, {'prompt': str} or {'prompt_token_ids': [int]}, "
                        f"not {type(prompt).__name__}")

    @staticmethod
    def _params_list(sampling_params, n_prompts: int) -> List[SamplingParams]:
        if sampling_params is None:
            return [SamplingParams()] * n_prompts
        if isinstance(sampling_params, SamplingParams):
            return [sampling_params] * n_prompts
        params = list(sampling_params)
        if len(params) != n_prompts:
            raise ValueError(f"{len(params)} sampling params for {n_prompts} prompts")
        for p in params:
            if not isinstance(p, SamplingParams):
                raise TypeError("sampling_params must be SamplingParams or a list of them")
        return params

    # --- running ------------------------------------------------------------------------
    def _submit(self, text, ids, params: SamplingParams):
        engine_id = self._engine.add_tokens(ids, params.to_json())
        self._next_id += 1
        outputs = [CompletionOutput(index=i) for i in range(params.n)]
        return engine_id, RequestOutput(str(self._next_id - 1), text, list(ids), outputs)

    def _run(self, prompts, params: List[SamplingParams]) -> List[RequestOutput]:
        submitted = []
        n_drained = 0
        try:
            for (text, ids), p in zip(prompts, params):
                while True:
                    try:
                        submitted.append(self._submit(text, ids, p))
                        break
                    except _hadron.QueueFullError:
                        if n_drained == len(submitted):  # full of other callers' requests
                            raise
                        self._drain(*submitted[n_drained])  # make room: finish the oldest
                        n_drained += 1
            for engine_id, request in submitted[n_drained:]:
                self._drain(engine_id, request)
        except BaseException:  # KeyboardInterrupt included: nothing keeps running
            for engine_id, request in submitted:
                if not request.finished:
                    self._engine.abort(engine_id)
            raise
        return [request for _, request in submitted]

    def _drain(self, engine_id: int, request: RequestOutput) -> None:
        for output in self._engine.collect(engine_id):
            apply_output(request, output)

    def generate(self, prompts, sampling_params=None, use_tqdm=False, **kwargs
                 ) -> List[RequestOutput]:
        """Completions of one prompt or a list, in order (vLLM's LLM.generate)."""
        if kwargs:
            raise TypeError(f"generate() got unexpected keyword arguments {sorted(kwargs)}")
        if isinstance(prompts, (str, dict)):
            prompts = [prompts]
        inputs = [self._prompt(p) for p in prompts]
        return self._run(inputs, self._params_list(sampling_params, len(inputs)))

    def chat(self, messages, sampling_params=None, use_tqdm=False,
             add_generation_prompt=True, **kwargs) -> List[RequestOutput]:
        """One conversation (a list of {"role", "content"}) or a list of them, rendered with
        the model's chat template (vLLM's LLM.chat)."""
        if kwargs:
            raise TypeError(f"chat() got unexpected keyword arguments {sorted(kwargs)}")
        if add_generation_prompt is not True:
            raise ValueError("add_generation_prompt=False is not supported by hadron yet")
        if not isinstance(messages, (list, tuple)):
            raise TypeError("messages must be a list of messages or a list of conversations")
        conversations = messages if messages and isinstance(messages[0], (list, tuple)) else [
            messages]
        inputs = []
        for conversation in conversations:
            try:
                text = self._engine.apply_chat_template(json.dumps(list(conversation)))
            except TypeError as e:
                raise TypeError(f"messages are not JSON: {e}") from None
            inputs.append((text, self._engine.tokenize(text, False)))
        return self._run(inputs, self._params_list(sampling_params, len(inputs)))

    def metrics(self) -> dict:
        """The engine's counters (running and waiting requests, tokens, KV usage...)."""
        return json.loads(self._engine.metrics())

    def close(self) -> None:
        """Stops the engine and frees the model (also when the LLM is garbage-collected)."""
        self._engine.close()
