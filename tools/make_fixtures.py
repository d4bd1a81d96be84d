#!/usr/bin/env python3
"""Tiny random checkpoints with Hugging Face transformers' reference outputs.

Each fixture shrinks a real config from ../shared/data/configs (keeping its architecture and
quirks: rope scaling, tied embeddings, q/k norm, decoupled head_dim), initialises random
weights, saves them with save_pretrained in the fixture's storage dtype, reloads them in
float32 with eager attention and records, for a few prompts of awkward lengths:
  - greedy continuations (argmax of the full-sequence forward, step by step), and
  - the float32 logits after every position of prompt + continuation.

Files per fixture (tests/fixtures/<name>/):
  config.json           as transformers writes it (transformers 5: rope_parameters, dtype)
  config.original.json  hub-style config the fixture was made from (rope_theta, rope_scaling)
  model.safetensors     the weights
  reference.json        prompts, continuations, versions, storage dtype
  logits_<i>.npy        float32 [len(prompt) + len(continuation), vocab]

Usage: python3 tools/make_fixtures.py --shared ../shared --out tests/fixtures
Needs torch and transformers (run on the GPU machine, see ../shared/GPU.md; CPU is enough).
"""
import argparse
import json
import os

import numpy as np
import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

VOCAB = 512
PROMPT_LENGTHS = (7, 19, 33)  # not multiples of the KV block size (16)
CONTINUATION = 12

# name -> (source config folder, overrides of the hub config, storage dtype)
FIXTURES = {
    "llama3": ("meta-llama__Llama-3.1-8B-Instruct",
               dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, head_dim=16),
               torch.bfloat16),
    "llama-linear-rope": ("meta-llama__Llama-3.2-1B",
                          dict(hidden_size=64, intermediate_size=96, num_hidden_layers=3,
                               num_attention_heads=8, num_key_value_heads=1, head_dim=8,
                               rope_scaling={"type": "linear", "factor": 4.0}),
                          torch.float16),
    "qwen3-tied": ("Qwen__Qwen3-0.6B",
                   dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=2, head_dim=32),
                   torch.float32),
    "qwen3-gqa4": ("Qwen__Qwen3-8B",
                   dict(hidden_size=96, intermediate_size=160, num_hidden_layers=3,
                        num_attention_heads=8, num_key_value_heads=2, head_dim=16),
                   torch.bfloat16),
    # head_dim 64 and 128: the shapes the CUDA kernels are built for (GPU fixture tests).
    "llama3-hd64": ("meta-llama__Llama-3.1-8B-Instruct",
                    dict(hidden_size=128, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=64),
                    torch.bfloat16),
    "qwen3-hd128": ("Qwen__Qwen3-8B",
                    dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=128),
                    torch.bfloat16),
}


def shrink(hub_config, overrides):
    config = dict(hub_config)
    config.update(overrides)
    config.update(vocab_size=VOCAB, bos_token_id=1,
                  eos_token_id=2, pad_token_id=None, initializer_range=0.1)
    for key in ("max_window_layers",):
        if key in config:
            config[key] = config["num_hidden_layers"]
    return config


def randomise_norms(model, generator):
    with torch.no_grad():
        for name, param in model.named_parameters():
            if param.dim() == 1 and "norm" in name:
                param.copy_(1 + 0.4 * (torch.rand(param.shape, generator=generator) - 0.5))


def greedy(model, prompt, n):
    tokens = list(prompt)
    for _ in range(n):
        logits = model(torch.tensor([tokens])).logits[0, -1]
        tokens.append(int(torch.argmax(logits)))
    return tokens[len(prompt):]


def make_fixture(name, shared, out_root, seed):
    source, overrides, storage_dtype = FIXTURES[name]
    with open(os.path.join(shared, "data", "configs", source, "config.json")) as f:
        original = shrink(json.load(f), overrides)
    out = os.path.join(out_root, name)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.original.json"), "w") as f:
        json.dump(original, f, indent=2, sort_keys=True)
        f.write("\n")

    torch.manual_seed(seed)
    kwargs = {k: v for k, v in original.items() if k != "model_type"}
    config = AutoConfig.for_model(original["model_type"], **kwargs)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    randomise_norms(model, torch.Generator().manual_seed(seed))
    model.to(storage_dtype).save_pretrained(out, safe_serialization=True)

    reference = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32,
                                                     attn_implementation="eager").eval()
    rng = np.random.default_rng(seed)
    prompts, continuations = [], []
    with torch.no_grad():
        for i, length in enumerate(PROMPT_LENGTHS):
            prompt = [int(t) for t in rng.integers(3, VOCAB, size=length)]
            continuation = greedy(reference, prompt, CONTINUATION)
            logits = reference(torch.tensor([prompt + continuation])).logits[0]
            np.save(os.path.join(out, f"logits_{i}.npy"), logits.float().numpy())
            prompts.append(prompt)
            continuations.append(continuation)
    with open(os.path.join(out, "reference.json"), "w") as f:
        json.dump({"source_config": source, "storage_dtype": str(storage_dtype),
                   "transformers": transformers.__version__, "torch": torch.__version__,
                   "prompts": prompts, "continuations": continuations}, f, indent=1)
        f.write("\n")
    for leftover in ("generation_config.json",):
        path = os.path.join(out, leftover)
        if os.path.exists(path):
            os.remove(path)
    size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    print(f"{name}: {size / 1e6:.2f} MB, continuations {continuations}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                         "shared"))
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests",
                                                      "fixtures"))
    parser.add_argument("--only", nargs="*", default=sorted(FIXTURES))
    parser.add_argument("--seed", type=int, default=1234)
    args = parser.parse_args()
    print(f"transformers {transformers.__version__}, torch {torch.__version__}")
    for name in args.only:
        make_fixture(name, args.shared, args.out, args.seed)


if __name__ == "__main__":
    main()
