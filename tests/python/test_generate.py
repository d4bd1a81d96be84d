"""Greedy output through Python equals the C API's and the CLI's; streaming equals
non-streaming; many threads at once; vLLM's output shapes."""

import asyncio
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import hadron
from conftest import MODEL, PROMPT, cli_generate
from hadron import SamplingParams

GREEDY = SamplingParams(temperature=0, max_tokens=40)


def test_greedy_equals_c_and_cli(llm):
    out = llm.generate([PROMPT], GREEDY)[0]
    cli = cli_generate("--prompt", PROMPT, "--max-tokens", "40").stdout
    c = subprocess.run([os.environ["HADRON_C_EXAMPLE"], PROMPT, "40", MODEL],
                       capture_output=True, text=True, check=True).stdout
    assert out.outputs[0].text
    assert out.outputs[0].text == cli.removesuffix("\n")
    assert out.outputs[0].text == c


def test_chat_equals_cli(llm):
    message = "Who was the son of Abraham?"
    out = llm.chat([{"role": "user", "content": message}],
                   SamplingParams(temperature=0, max_tokens=24))[0]
    cli = cli_generate("--chat", message, "--max-tokens", "24").stdout
    assert out.outputs[0].text == cli.removesuffix("\n")
    assert out.prompt.endswith("\n")  # the rendered template, generation prompt included
    assert out.prompt_token_ids == llm._engine.tokenize(out.prompt, False)


def test_output_shape(llm):
    params = SamplingParams(temperature=0.8, seed=3, max_tokens=8, n=2, logprobs=2)
    out = llm.generate({"prompt": PROMPT}, params)[0]
    assert isinstance(out, hadron.RequestOutput) and out.finished
    assert out.prompt == PROMPT and out.prompt_token_ids == llm._engine.tokenize(PROMPT, True)
    assert [c.index for c in out.outputs] == [0, 1]
    for c in out.outputs:
        assert isinstance(c, hadron.CompletionOutput)
        assert c.finish_reason in ("stop", "length") and 0 < len(c.token_ids) <= 8
        assert len(c.logprobs) == len(c.token_ids)
        for token, entry in zip(c.token_ids, c.logprobs):
            assert token in entry and entry[token].logprob <= 0
        assert abs(c.cumulative_logprob - sum(e[t].logprob for t, e in
                                              zip(c.token_ids, c.logprobs))) < 1e-4
    ids = llm.generate({"prompt_token_ids": out.prompt_token_ids}, GREEDY)[0]
    assert ids.outputs[0].text == llm.generate(PROMPT, GREEDY)[0].outputs[0].text


def test_stop_and_length(llm):
    full = llm.generate(PROMPT, SamplingParams(temperature=0, max_tokens=6))[0].outputs[0]
    assert full.finish_reason == "length" and len(full.token_ids) == 6
    stop = full.text.split()[1]
    cut = llm.generate(PROMPT, SamplingParams(temperature=0, max_tokens=6, stop=[stop]))[0]
    assert cut.outputs[0].finish_reason == "stop"
    assert stop not in cut.outputs[0].text and full.text.startswith(cut.outputs[0].text)


def test_streaming_equals_non_streaming(llm):
    for params in (GREEDY, SamplingParams(temperature=0.9, top_p=0.9, seed=11, max_tokens=40)):
        whole = llm.generate(PROMPT, params)[0].outputs[0]
        engine = hadron.AsyncLLM(MODEL, device="cpu", max_model_len=1024)

        async def stream():
            texts = []
            async for out in engine.generate(PROMPT, params, "req-1"):
                texts.append(out.outputs[0].text)
            return out, texts

        last, texts = asyncio.run(stream())
        engine.shutdown()
        assert last.request_id == "req-1" and last.finished
        assert last.outputs[0].text == whole.text and last.outputs[0].token_ids == whole.token_ids
        assert len(texts) > 1  # it streamed, cumulative
        assert all(b.startswith(a) for a, b in zip(texts, texts[1:]))


def test_async_concurrent_and_cancel():
    engine = hadron.AsyncLLM(MODEL, device="cpu", max_model_len=1024)

    async def one(i):
        async for out in engine.generate(f"{PROMPT} {i}", GREEDY, f"r{i}"):
            pass
        return out.outputs[0].text

    async def cancelled():
        params = SamplingParams(max_tokens=900, ignore_eos=True)
        stream = engine.generate(PROMPT, params, "long")
        async for out in stream:
            break
        await stream.aclose()  # the consumer stops: the request is aborted
        return out

    async def main():
        texts = await asyncio.gather(*(one(i) for i in range(4)))
        partial = await cancelled()
        return texts, partial

    texts, partial = asyncio.run(main())
    assert all(texts) and not partial.finished
    for _ in range(50):
        if engine.metrics()["num_requests_running"] == 0:
            break
        asyncio.run(asyncio.sleep(0.02))
    assert engine.metrics()["num_requests_running"] == 0
    engine.shutdown()


def test_more_prompts_than_the_queue_holds():
    llm = hadron.LLM(MODEL, device="cpu", max_model_len=256, max_queued_requests=3)
    prompts = [f"{PROMPT} {i}" for i in range(10)]
    outs = llm.generate(prompts, GREEDY)
    assert [o.prompt for o in outs] == prompts and all(o.finished for o in outs)
    assert outs[4].outputs[0].text == llm.generate(prompts[4], GREEDY)[0].outputs[0].text
    llm.close()


def test_eight_threads(llm):
    prompts = [f"{PROMPT} {i}" for i in range(8)]
    alone = [llm.generate(p, GREEDY)[0].outputs[0].text for p in prompts]
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(lambda p: llm.generate(p, GREEDY)[0].outputs[0].text, prompts))
    assert together == alone
    batch = [o.outputs[0].text for o in llm.generate(prompts, GREEDY)]
    assert batch == alone
