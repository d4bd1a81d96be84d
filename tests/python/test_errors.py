"""Bad input raises ValueError, TypeError or HadronError, never crashes; Ctrl-C aborts."""

import _thread
import threading

import pytest

import hadron
from conftest import MODEL, PROMPT
from hadron import SamplingParams


@pytest.mark.parametrize("kwargs, error", [
    (dict(model="/no/such/model"), ValueError),
    (dict(model=MODEL, tensor_parallel_size=2), ValueError),
    (dict(model=MODEL, max_model_len="many"), ValueError),
    (dict(model=MODEL, device="tpu"), ValueError),
    (dict(model=MODEL, block_size=0), ValueError),
    (dict(model=MODEL, no_such_option=1), TypeError),
    (dict(model=3), TypeError),
])
def test_bad_engine_arguments(kwargs, error):
    with pytest.raises(error):
        hadron.LLM(**kwargs)


@pytest.mark.parametrize("kwargs", [
    dict(temperature=-1), dict(top_p=2), dict(top_p=0), dict(top_k=-7), dict(min_p=1.5),
    dict(n=0), dict(max_tokens=0), dict(max_tokens=10**6), dict(logprobs=99),
    dict(repetition_penalty=0), dict(presence_penalty=5), dict(stop=[""]),
    dict(stop_token_ids=[-1]), dict(logit_bias={10**9: 1.0}), dict(prompt_logprobs=1),
])
def test_bad_sampling_values(llm, kwargs):
    with pytest.raises(ValueError):
        llm.generate(PROMPT, SamplingParams(**kwargs))


@pytest.mark.parametrize("kwargs", [
    dict(temperature="hot"), dict(max_tokens=2.5), dict(seed=True), dict(stop=7),
    dict(no_such_field=1),
])
def test_bad_sampling_types(kwargs):
    with pytest.raises(TypeError):
        SamplingParams(**kwargs)


@pytest.mark.parametrize("prompt, error", [
    (123, TypeError), (None, TypeError), ({"prompt_token_ids": [1, "x"]}, TypeError),
    ({"prompt_token_ids": [1, -5]}, ValueError), ({"prompt_token_ids": []}, ValueError),
    ({"prompt_token_ids": [10**8]}, ValueError), ({"nothing": 1}, TypeError),
])
def test_bad_prompts(llm, prompt, error):
    with pytest.raises(error):
        llm.generate(prompt, SamplingParams(max_tokens=2))


@pytest.mark.parametrize("messages, error", [
    ([{"role": "wizard", "content": "hi"}], ValueError),
    ([{"role": "user", "content": 7}], ValueError),
    ([{"content": "no role"}], ValueError),
    ([], ValueError),
    ([{"role": "user", "content": object()}], TypeError),
    ("a string", TypeError),
])
def test_bad_messages(llm, messages, error):
    with pytest.raises(error):
        llm.chat(messages, SamplingParams(max_tokens=2))


def test_mismatched_params_and_kwargs(llm):
    with pytest.raises(ValueError):
        llm.generate([PROMPT, PROMPT], [SamplingParams()])
    with pytest.raises(TypeError):
        llm.generate(PROMPT, SamplingParams(), no_such_argument=True)


def test_closed_engine():
    llm = hadron.LLM(MODEL, device="cpu", max_model_len=256)
    llm.close()
    with pytest.raises(hadron.HadronError):
        llm.generate(PROMPT)


def test_ctrl_c_aborts(llm):
    long = SamplingParams(max_tokens=900, ignore_eos=True)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        llm.generate([PROMPT] * 4, long)
    timer.join()
    # The requests were aborted: nothing runs, and the engine still serves.
    out = llm.generate(PROMPT, SamplingParams(temperature=0, max_tokens=4))[0]
    assert out.finished and len(out.outputs[0].token_ids) == 4
    assert llm.metrics()["num_requests_running"] <= 1
