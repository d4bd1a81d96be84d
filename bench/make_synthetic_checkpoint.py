#!/usr/bin/env python3
"""Writes a sharded bf16 safetensors checkpoint with the tensor names and shapes of a dense
Qwen3/Llama config (random values, a 1 MiB random block repeated), to time real weight
loading where no real checkpoint can be downloaded (the GPU machine is offline).

Usage: bench/make_synthetic_checkpoint.py CONFIG_JSON OUT_DIR [--shard-gb 4]
"""
import argparse
import json
import math
import os
import random
import shutil
import struct


def tensor_shapes(cfg):
    h, v, inter = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or h // nh
    yield "model.embed_tokens.weight", (v, h)
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        yield p + "input_layernorm.weight", (h,)
        yield p + "post_attention_layernorm.weight", (h,)
        yield p + "self_attn.q_proj.weight", (nh * hd, h)
        yield p + "self_attn.k_proj.weight", (nkv * hd, h)
        yield p + "self_attn.v_proj.weight", (nkv * hd, h)
        yield p + "self_attn.o_proj.weight", (h, nh * hd)
        if cfg.get("model_type") == "qwen3":
            yield p + "self_attn.q_norm.weight", (hd,)
            yield p + "self_attn.k_norm.weight", (hd,)
        yield p + "mlp.gate_proj.weight", (inter, h)
        yield p + "mlp.up_proj.weight", (inter, h)
        yield p + "mlp.down_proj.weight", (h, inter)
    yield "model.norm.weight", (h,)
    if not cfg.get("tie_word_embeddings", False):
        yield "lm_head.weight", (v, h)


def write_shard(path, tensors, block):
    header, offset = {}, 0
    for name, shape in tensors:
        n = 2 * math.prod(shape)
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        left = offset
        while left > 0:
            chunk = block[: min(left, len(block))]
            f.write(chunk)
            left -= len(chunk)
    return offset


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("config")
    ap.add_argument("out")
    ap.add_argument("--shard-gb", type=float, default=4.0)
    args = ap.parse_args()
    cfg = json.load(open(args.config))
    os.makedirs(args.out, exist_ok=True)
    shutil.copy(args.config, os.path.join(args.out, "config.json"))
    rng = random.Random(0)
    # bf16 values of magnitude 0.016-0.03: random mantissa, fixed exponent, random sign.
    n_values = 1 << 19
    block = struct.pack(f"<{n_values}H", *(0x3C80 | rng.getrandbits(7) | rng.getrandbits(1) << 15
                                           for _ in range(n_values)))
    shards, current, size = [], [], 0
    for name, shape in tensor_shapes(cfg):
        n = 2 * math.prod(shape)
        if current and size + n > args.shard_gb * 1e9:
            shards.append(current)
            current, size = [], 0
        current.append((name, shape))
        size += n
    shards.append(current)
    weight_map, total = {}, 0
    for i, tensors in enumerate(shards):
        fname = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        total += write_shard(os.path.join(args.out, fname), tensors, block)
        weight_map.update({name: fname for name, _ in tensors})
    with open(os.path.join(args.out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f)
    print(f"wrote {total / 1e9:.2f} GB in {len(shards)} shards to {args.out}")


if __name__ == "__main__":
    main()
