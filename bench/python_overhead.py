#!/usr/bin/env python3
"""The Python package's costs against the CLI on one model: the time to import hadron and load
the model, and decode tok/s at batch 1 (greedy, ignore_eos) through LLM.generate and through
`hadron generate`, interleaved, best of --runs each. Prints one JSON object.

    PYTHONPATH=build/python python3 bench/python_overhead.py --cli build/hadron \\
        --model models/default --device cpu
"""

import argparse
import json
import re
import subprocess
import sys
import time

PROMPT = "And God said"


def import_and_load_seconds(args) -> float:
    code = ("import time; t = time.perf_counter(); import hadron; "
            f"llm = hadron.LLM({args.model!r}, device={args.device!r}, max_model_len=1024); "
            "print(time.perf_counter() - t)")
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                check=True).stdout)


def python_tok_s(llm, args) -> float:
    from hadron import SamplingParams
    params = SamplingParams(temperature=0, max_tokens=args.tokens, ignore_eos=True)
    start = time.perf_counter()
    out = llm.generate(PROMPT, params)[0]
    seconds = time.perf_counter() - start
    assert len(out.outputs[0].token_ids) == args.tokens
    return args.tokens / seconds


def cli_tok_s(args) -> float:
    # "... N tokens in T s ...": the engine's time after the model loaded, prefill included.
    stderr = subprocess.run(
        [args.cli, "generate", "--model", args.model, "--device", args.device, "--temperature",
         "0", "--prompt", PROMPT, "--max-tokens", str(args.tokens), "--ignore-eos",
         "--max-model-len", "1024"], capture_output=True, text=True, check=True).stderr
    tokens, seconds = re.search(r"; (\d+) tokens in ([0-9.]+) s", stderr).groups()
    return int(tokens) / float(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", required=True, help="the hadron executable")
    parser.add_argument("--model", required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    load = min(import_and_load_seconds(args) for _ in range(args.runs))
    import hadron
    llm = hadron.LLM(args.model, device=args.device, max_model_len=1024)
    python_tok_s(llm, args)  # warm-up
    runs = [(python_tok_s(llm, args), cli_tok_s(args)) for _ in range(args.runs)]
    py, cli = max(r[0] for r in runs), max(r[1] for r in runs)
    print(json.dumps({"import_and_load_s": round(load, 3), "python_tok_s": round(py, 1),
                      "cli_tok_s": round(cli, 1), "overhead": round(1 - py / cli, 4),
                      "tokens": args.tokens, "device": args.device}))


if __name__ == "__main__":
    main()
