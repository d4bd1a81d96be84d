#!/usr/bin/env python3
"""Trains models/default: a small Qwen3ForCausalLM and its byte-level BPE tokenizer on the KJV Bible.

Data
  The King James Version of the Bible (1611) as the `bible` program ships it, from Debian 12's
  packages bible-kjv-text 4.38 (the compressed text, /usr/lib/bible.data) and bible-kjv 4.38
  (the `bible` program that expands it).
  tools/get_training_corpus.sh extracts it into .train-data/kjv.txt: 31,102 verses, one a line,
  "Ge1:1 In the beginning God created the heaven and the earth.", 4,404,412 bytes,
  sha256 cd45f0c9cedab8e4439bd6486c8952c77cc8b0ecc5d1f6ae3513f2039f47229d.
Licence
  The KJV text is in the public domain (Debian's copyright file: "The copyright for the King
  James Version text of the Bible is expired"); in the United Kingdom the Crown's letters patent
  still restrict printing it. Only the text is used, not the `bible` program (GPL-2+).
Split
  The 1,189 chapters in canonical order, numbered from 0: chapter % 20 == 7 is validation (early
  stopping), chapter % 20 == 17 is test (the reported perplexity), the rest (90 %) is training.
Documents
  Each chapter is a document: a heading line ("Genesis 1"), a blank line, then one verse a line,
  followed by <|endoftext|>. From training chapters only, one in three verses also becomes a
  ChatML exchange (a user asks for the verse by reference or by a word in it, the assistant
  answers with the verse and <|im_end|>), so that chat requests get an answer that stops.
Tokenizer
  Byte-level BPE like Qwen3's tokenizer.json: NFC normaliser, Qwen's pre-tokenizer regex then
  ByteLevel, ByteLevel decoder; vocab 4096 including <|endoftext|> (0), <|im_start|> (1) and
  <|im_end|> (2); trained on the training documents.
Model
  Qwen3ForCausalLM: hidden 256, 8 layers, 4 query heads and 2 KV heads of head_dim 64,
  intermediate 768, tied embeddings, RoPE theta 10000, context 1024; 7.35 M parameters, stored
  in bfloat16 (14.7 MB).
Training
  AdamW (betas 0.9/0.95, weight decay 0.1 on matrices), peak lr 1.5e-3 after 100 warm-up steps,
  cosine decay to 1.5e-4 over 1600 steps, batch 16 random windows of 1024 tokens, bf16
  autocast, gradient clipping 1.0, dropout 0.1 on the embeddings and on each attention and MLP
  output (training only; forward hooks, so the saved model is plain Qwen3). Validation loss
  every 100 steps; the best checkpoint is kept; training stops early at --max-seconds.
Outputs
  models/default/: config.json, model.safetensors, generation_config.json, tokenizer.json,
  tokenizer_config.json (ChatML template), SAMPLES.md.
  tests/fixtures/default-model/: reference.json and logits_<i>.npy from the saved checkpoint
  reloaded by transformers in float32 with eager attention (see tools/make_fixtures.py).
Reproducibility
  Seeds are fixed (--seed); GPU kernels may still differ in the last bits between runs.

Usage (repository root; on the GPU machine: 87 s on one H200, 64 s of it training, where the
validation loss was best at step 800 of 1600 and test perplexity came out at 24.34):
  tools/get_training_corpus.sh    # here, with Debian's registry; carry .train-data/
  python3 tools/train_default_model.py
"""
import argparse
import json
import math
import os
import random
import re
import time

import numpy as np
import torch
import torch.nn.functional as F
import transformers
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers, processors, trainers
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig, Qwen3Config

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
ENDOFTEXT, IM_START, IM_END = range(3)
QWEN_PRETOKENIZE = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
                    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}")

VOCAB = 4096
CONTEXT = 1024
MODEL = dict(hidden_size=256, intermediate_size=768, num_hidden_layers=8,
             num_attention_heads=4, num_key_value_heads=2, head_dim=64)
TRAIN = dict(batch=16, steps=1600, warmup=100, lr=1.5e-3, min_lr=1.5e-4, weight_decay=0.1,
             dropout=0.1, eval_every=100, clip=1.0)
PROMPT_LENGTHS = (7, 19)  # plus one ChatML prompt; none a multiple of the KV block size (16)
CONTINUATION = 12
SAMPLE_PROMPTS = ("In the beginning", "And the LORD said unto Moses,", "Blessed are the",
                  "The kingdom of heaven is like", "Wisdom")
SAMPLE_CHATS = ("Give me a verse about mercy.", "Recite Psalms 23:1.")

BOOKS = {
    "Ge": "Genesis", "Exo": "Exodus", "Lev": "Leviticus", "Num": "Numbers",
    "Deu": "Deuteronomy", "Josh": "Joshua", "Jdgs": "Judges", "Ruth": "Ruth",
    "1Sm": "1 Samuel", "2Sm": "2 Samuel", "1Ki": "1 Kings", "2Ki": "2 Kings",
    "1Chr": "1 Chronicles", "2Chr": "2 Chronicles", "Ezra": "Ezra", "Neh": "Nehemiah",
    "Est": "Esther", "Job": "Job", "Psa": "Psalms", "Prv": "Proverbs", "Eccl": "Ecclesiastes",
    "SSol": "Song of Solomon", "Isa": "Isaiah", "Jer": "Jeremiah", "Lam": "Lamentations",
    "Eze": "Ezekiel", "Dan": "Daniel", "Hos": "Hosea", "Joel": "Joel", "Amos": "Amos",
    "Obad": "Obadiah", "Jonah": "Jonah", "Mic": "Micah", "Nahum": "Nahum", "Hab": "Habakkuk",
    "Zep": "Zephaniah", "Hag": "Haggai", "Zec": "Zechariah", "Mal": "Malachi",
    "Mat": "Matthew", "Mark": "Mark", "Luke": "Luke", "John": "John", "Acts": "Acts",
    "Rom": "Romans", "1Cor": "1 Corinthians", "2Cor": "2 Corinthians", "Gal": "Galatians",
    "Eph": "Ephesians", "Phi": "Philippians", "Col": "Colossians", "1Th": "1 Thessalonians",
    "2Th": "2 Thessalonians", "1Tim": "1 Timothy", "2Tim": "2 Timothy", "Titus": "Titus",
    "Phmn": "Philemon", "Heb": "Hebrews", "Jas": "James", "1Pet": "1 Peter", "2Pet": "2 Peter",
    "1Jn": "1 John", "2Jn": "2 John", "3Jn": "3 John", "Jude": "Jude", "Rev": "Revelation",
}
STOPWORDS = set("""which their there shall unto thereof should would these those where whose
have hath they them then than with from said were this that what when upon also into your
every because before after again against about among even""".split())


# ----------------------------------------------------------------------------------- data

def read_chapters(path):
    """[(book, chapter, [(verse, text), ...]), ...] in canonical order."""
    chapters = []
    line_re = re.compile(r"^(\d?[A-Za-z]+)(\d+):(\d+) (.*)$")
    with open(path, encoding="utf-8") as f:
        for line in f:
            abbrev, chapter, verse, text = line_re.match(line.rstrip("\n")).groups()
            key = (BOOKS[abbrev], int(chapter))
            if not chapters or chapters[-1][:2] != key:
                chapters.append((*key, []))
            chapters[-1][2].append((int(verse), text.strip()))
    assert len(chapters) == 1189, len(chapters)
    return chapters


def split_of(chapter_idx):
    return {7: "val", 17: "test"}.get(chapter_idx % 20, "train")


def chapter_document(book, chapter, verses):
    return f"{book} {chapter}\n\n" + "".join(text + "\n" for _, text in verses)


def render_chat(messages, add_generation_prompt):
    """Python twin of CHAT_TEMPLATE (checked against transformers' rendering)."""
    text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return text + ("<|im_start|>assistant\n" if add_generation_prompt else "")


def chat_exchange(book, chapter, verse, text, rng):
    reference = f"{book} {chapter}:{verse}"
    words = [w for w in re.findall(r"[a-z]{5,}", text) if w not in STOPWORDS]
    questions = [f"Recite {reference}.", f"What does {reference} say?",
                 f"Quote {book} chapter {chapter}, verse {verse}."]
    if words:
        word = rng.choice(words)
        questions += [f"Give me a verse about {word}.", f"Find a verse with the word {word}."]
    messages = []
    if rng.random() < 0.3:
        messages.append({"role": "system", "content": "You are a helpful assistant."})
    messages.append({"role": "user", "content": rng.choice(questions)})
    messages.append({"role": "assistant", "content": text})
    return render_chat(messages, add_generation_prompt=False)


def build_documents(chapters, seed):
    rng = random.Random(seed)
    docs = {"train": [], "val": [], "test": []}
    for idx, (book, chapter, verses) in enumerate(chapters):
        split = split_of(idx)
        docs[split].append(chapter_document(book, chapter, verses))
        if split == "train":
            docs["train"] += [chat_exchange(book, chapter, v, t, rng) for v, t in verses
                              if rng.random() < 1 / 3]
    rng.shuffle(docs["train"])
    return docs


# ------------------------------------------------------------------------------ tokenizer

def train_tokenizer(texts):
    tok = Tokenizer(models.BPE(byte_fallback=False, ignore_merges=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN_PRETOKENIZE), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, min_frequency=2, show_progress=False,
                                  special_tokens=list(SPECIAL_TOKENS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    # Training splits text with the pre-tokenizer alone, so special tokens are cut out first.
    special = re.compile("|".join(re.escape(t) for t in SPECIAL_TOKENS))
    tok.train_from_iterator((special.sub("\n", t) for t in texts), trainer=trainer)
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True)
                            for t in SPECIAL_TOKENS])
    for idx, token in enumerate(SPECIAL_TOKENS):
        assert tok.token_to_id(token) == idx, (token, tok.token_to_id(token))
    assert tok.get_vocab_size() == VOCAB, tok.get_vocab_size()
    return qwen_style(tok)


def qwen_style(tok):
    """Spells every ByteLevel step as Qwen3's tokenizer.json does (the Python constructors
    do not take all of these options; none of them changes encoding or decoding here)."""
    spec = json.loads(tok.to_str())
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                  "use_regex": False}
    spec["pre_tokenizer"]["pretokenizers"][1] = dict(byte_level)
    spec["post_processor"] = dict(byte_level)
    spec["decoder"] = dict(byte_level)
    return Tokenizer.from_str(json.dumps(spec))


def tokenizer_config(tokenizer_class):
    added = {str(i): {"content": t, "lstrip": False, "normalized": False, "rstrip": False,
                      "single_word": False, "special": True}
             for i, t in enumerate(SPECIAL_TOKENS)}
    return {"add_bos_token": False, "add_prefix_space": False, "added_tokens_decoder": added,
            "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
            "bos_token": "<|endoftext|>", "chat_template": CHAT_TEMPLATE,
            "clean_up_tokenization_spaces": False, "eos_token": "<|im_end|>",
            "errors": "replace", "model_max_length": CONTEXT, "pad_token": "<|endoftext|>",
            "split_special_tokens": False, "tokenizer_class": tokenizer_class,
            "unk_token": None}


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f, indent=2, ensure_ascii=False)
        f.write("\n")


def save_tokenizer(tok, out, probe_texts):
    """tokenizer.json + tokenizer_config.json; checks transformers encodes as `tok` does."""
    tok.save(os.path.join(out, "tokenizer.json"))
    chat = [{"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Recite John 3:16."}]
    for tokenizer_class in ("Qwen2Tokenizer", "PreTrainedTokenizerFast"):
        write_json(os.path.join(out, "tokenizer_config.json"), tokenizer_config(tokenizer_class))
        try:
            hf = AutoTokenizer.from_pretrained(out)
            same = all(hf.encode(t, add_special_tokens=False) == tok.encode(t).ids
                       for t in probe_texts)
            rendered = hf.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
            same = same and rendered == render_chat(chat, add_generation_prompt=True)
        except Exception as error:  # report and try the next class; the weights are saved
            print(f"tokenizer_class {tokenizer_class}: {type(error).__name__}: {error}")
            same = False
        print(f"tokenizer_class {tokenizer_class}: transformers agrees with tokenizers: {same}")
        if same:
            return
    print("WARNING: transformers' tokenizer disagrees with the trained tokenizer")


# ---------------------------------------------------------------------------------- model

def make_model(device):
    config = Qwen3Config(vocab_size=VOCAB, max_position_embeddings=CONTEXT,
                         rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
                         rms_norm_eps=1e-6, tie_word_embeddings=True, attention_bias=False,
                         use_sliding_window=False, max_window_layers=MODEL["num_hidden_layers"],
                         bos_token_id=ENDOFTEXT,
                         eos_token_id=ENDOFTEXT, pad_token_id=ENDOFTEXT, **MODEL)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32,
                                             attn_implementation="sdpa")
    return model.to(device)


def add_dropout(model, p):
    """Dropout on the embeddings and on every residual branch, active in train() only."""
    def drop_output(module, inputs, output):
        if isinstance(output, tuple):
            return (F.dropout(output[0], p, module.training), *output[1:])
        return F.dropout(output, p, module.training)
    handles = [model.model.embed_tokens.register_forward_hook(drop_output)]
    for layer in model.model.layers:
        handles.append(layer.self_attn.register_forward_hook(drop_output))
        handles.append(layer.mlp.register_forward_hook(drop_output))
    return handles


def make_optimizer(model):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": TRAIN["weight_decay"]},
              {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=TRAIN["lr"], betas=(0.9, 0.95), fused=True)


def lr_at(step):
    if step < TRAIN["warmup"]:
        return TRAIN["lr"] * (step + 1) / TRAIN["warmup"]
    progress = (step - TRAIN["warmup"]) / max(1, TRAIN["steps"] - TRAIN["warmup"])
    cosine = 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
    return TRAIN["min_lr"] + (TRAIN["lr"] - TRAIN["min_lr"]) * cosine


def random_batch(stream, generator):
    starts = torch.randint(0, len(stream) - CONTEXT - 1, (TRAIN["batch"],),
                           generator=generator, device=stream.device)
    idx = starts[:, None] + torch.arange(CONTEXT + 1, device=stream.device)
    window = stream[idx]
    return window[:, :-1], window[:, 1:]


@torch.no_grad()
def mean_loss(model, stream, autocast):
    """Mean next-token loss (nats) over non-overlapping CONTEXT windows of `stream`."""
    model.eval()
    total, count = 0.0, 0
    for begin in range(0, len(stream) - 1, CONTEXT):
        window = stream[begin:begin + CONTEXT + 1][None]
        with torch.autocast(stream.device.type, dtype=torch.bfloat16, enabled=autocast):
            logits = model(window[:, :-1], use_cache=False).logits.float()
        loss = F.cross_entropy(logits.flatten(0, 1), window[:, 1:].flatten(), reduction="sum")
        total += loss.item()
        count += window.shape[1] - 1
    model.train()
    return total / count


def train(model, train_stream, val_stream, seed, max_seconds):
    handles = add_dropout(model, TRAIN["dropout"])
    optimizer = make_optimizer(model)
    generator = torch.Generator(device=train_stream.device).manual_seed(seed)
    best = (float("inf"), -1, None)
    start = time.time()
    model.train()
    for step in range(TRAIN["steps"]):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step)
        inputs, targets = random_batch(train_stream, generator)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(inputs, use_cache=False).logits
        loss = F.cross_entropy(logits.float().flatten(0, 1), targets.flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), TRAIN["clip"])
        optimizer.step()
        last = step == TRAIN["steps"] - 1 or time.time() - start > max_seconds
        if (step + 1) % TRAIN["eval_every"] == 0 or last:
            val = mean_loss(model, val_stream, autocast=True)
            if val < best[0]:
                state = {k: v.detach().clone() for k, v in model.state_dict().items()}
                best = (val, step + 1, state)
            print(f"step {step + 1:5d}  train loss {loss.item():.3f}  val loss {val:.3f} "
                  f"(ppl {math.exp(val):.2f})  lr {lr_at(step):.2e}  {time.time() - start:.0f}s",
                  flush=True)
        if last:
            break
    for handle in handles:
        handle.remove()
    print(f"best validation loss {best[0]:.3f} at step {best[1]}")
    model.load_state_dict(best[2])
    model.eval()


# -------------------------------------------------------------------------------- outputs

def save_model(model, out):
    model.generation_config = GenerationConfig(
        bos_token_id=ENDOFTEXT, eos_token_id=[IM_END, ENDOFTEXT], pad_token_id=ENDOFTEXT,
        do_sample=True, temperature=0.8, top_k=40, top_p=0.95, max_new_tokens=256)
    model.to(torch.bfloat16).save_pretrained(out, safe_serialization=True)


def greedy(model, prompt, n):
    tokens = list(prompt)
    for _ in range(n):
        logits = model(torch.tensor([tokens])).logits[0, -1]
        tokens.append(int(torch.argmax(logits)))
    return tokens[len(prompt):]


def reference_prompts(tok, test_docs):
    """Two text prompts of awkward lengths from test chapters, and one ChatML prompt."""
    prompts = []
    for length, doc in zip(PROMPT_LENGTHS, test_docs[3:]):
        body = doc.split("\n\n", 1)[1]
        ids = tok.encode(body).ids[:length]
        assert len(ids) == length
        prompts.append(ids)
    for question in ("Give me a verse about righteousness.", "Give me a verse about mercy."):
        ids = tok.encode(render_chat([{"role": "user", "content": question}], True)).ids
        if len(ids) % 16:
            prompts.append(ids)
            return prompts
    raise AssertionError("no ChatML prompt of an awkward length")


def write_references(reference, tok, test_docs, out, model_dir, seed):
    os.makedirs(out, exist_ok=True)
    prompts, continuations = reference_prompts(tok, test_docs), []
    with torch.no_grad():
        for i, prompt in enumerate(prompts):
            continuation = greedy(reference, prompt, CONTINUATION)
            logits = reference(torch.tensor([prompt + continuation])).logits[0]
            np.save(os.path.join(out, f"logits_{i}.npy"), logits.float().numpy())
            continuations.append(continuation)
            print(f"reference {i}: {tok.decode(prompt, skip_special_tokens=False)!r} -> "
                  f"{tok.decode(continuation, skip_special_tokens=False)!r}")
    with open(os.path.join(out, "reference.json"), "w") as f:
        json.dump({"source_config": model_dir, "storage_dtype": str(torch.bfloat16),
                   "transformers": transformers.__version__, "torch": torch.__version__,
                   "prompts": prompts, "continuations": continuations}, f, indent=1)
        f.write("\n")


@torch.no_grad()
def sample(model, tok, text, seed, max_new_tokens=60, temperature=0.8, top_k=40, top_p=0.95):
    generator = torch.Generator().manual_seed(seed)
    tokens, new = tok.encode(text).ids, []
    for _ in range(max_new_tokens):
        logits = model(torch.tensor([tokens + new])).logits[0, -1] / temperature
        top = torch.topk(logits, top_k)
        probs = torch.softmax(top.values, dim=0)
        probs = probs * (probs.cumsum(0) - probs < top_p)  # smallest prefix holding top_p
        choice = int(top.indices[torch.multinomial(probs / probs.sum(), 1, generator=generator)])
        new.append(choice)
        if choice in (IM_END, ENDOFTEXT):
            break
    return tok.decode(new, skip_special_tokens=False)


def write_samples(model, tok, out, seed, metrics):
    lines = ["# Samples from models/default", "",
             f"Written by tools/train_default_model.py (seed {seed}): transformers "
             f"{transformers.__version__}, float32 on the CPU, temperature 0.8, top-k 40, "
             "top-p 0.95, at most 60 new tokens. "
             f"Test perplexity {metrics['test_ppl']:.2f} ({metrics['test_bpb']:.3f} bits per "
             "byte).", ""]
    for i, text in enumerate(SAMPLE_PROMPTS):
        completion = sample(model, tok, text, seed + i)
        print(f"--- {text!r}\n{text}{completion}\n")
        lines += [f"## `{text}`", "", "```", text + completion, "```", ""]
    for i, question in enumerate(SAMPLE_CHATS):
        prompt = render_chat([{"role": "user", "content": question}], add_generation_prompt=True)
        completion = sample(model, tok, prompt, seed + 100 + i)
        print(f"--- chat {question!r}\n{completion}\n")
        lines += [f"## Chat: `{question}`", "", "```", prompt + completion, "```", ""]
    with open(os.path.join(out, "SAMPLES.md"), "w") as f:
        f.write("\n".join(lines))


def encode_stream(tok, docs, device):
    ids = []
    for encoding in tok.encode_batch(docs):
        ids += encoding.ids + [ENDOFTEXT]
    return torch.tensor(ids, dtype=torch.long, device=device)


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default=os.path.join(root, ".train-data", "kjv.txt"))
    parser.add_argument("--out", default=os.path.join(root, "models", "default"))
    parser.add_argument("--fixtures",
                        default=os.path.join(root, "tests", "fixtures", "default-model"))
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--max-seconds", type=float, default=150,
                        help="stop training after this long (the best checkpoint is kept)")
    parser.add_argument("--steps", type=int, default=TRAIN["steps"])
    parser.add_argument("--reuse", action="store_true",
                        help="skip training: rewrite the references and samples of the "
                        "checkpoint and tokenizer already in --out")
    args = parser.parse_args()
    TRAIN["steps"] = args.steps
    print(f"transformers {transformers.__version__}, torch {torch.__version__}, "
          f"device {torch.cuda.get_device_name() if torch.cuda.is_available() else 'cpu'}")
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"

    docs = build_documents(read_chapters(args.corpus), args.seed)
    if args.reuse:
        tok = Tokenizer.from_file(os.path.join(args.out, "tokenizer.json"))
    else:
        tok = train_tokenizer(docs["train"])
    streams = {split: encode_stream(tok, docs[split], device) for split in docs}
    for split, stream in streams.items():
        print(f"{split}: {len(docs[split])} documents, {len(stream)} tokens")

    if not args.reuse:
        model = make_model(device)
        n_params = sum(p.numel() for p in model.parameters())
        print(f"parameters: {n_params} ({n_params / 1e6:.2f} M)")
        train(model, streams["train"], streams["val"], args.seed, args.max_seconds)
        os.makedirs(args.out, exist_ok=True)
        save_model(model, args.out)
        save_tokenizer(tok, args.out, docs["test"][:20] + [render_chat(
            [{"role": "user", "content": "Hi"}], add_generation_prompt=True)])

    # Everything below uses the checkpoint as shipped: bf16 weights read back in float32.
    reference = AutoModelForCausalLM.from_pretrained(args.out, dtype=torch.float32,
                                                     attn_implementation="eager").eval()
    test_loss = mean_loss(reference.to(device), streams["test"], autocast=False)
    test_bytes = sum(len(d.encode("utf-8")) for d in docs["test"])  # separators not counted
    metrics = {"test_ppl": math.exp(test_loss),
               "test_bpb": test_loss * (len(streams["test"]) - 1) / test_bytes / math.log(2)}
    print(f"test perplexity {metrics['test_ppl']:.2f} (loss {test_loss:.3f} nats/token, "
          f"{metrics['test_bpb']:.3f} bits/byte), "
          f"{len(streams['test'])} tokens of {len(docs['test'])} held-out chapters")
    reference = reference.to("cpu")
    write_references(reference, tok, docs["test"], args.fixtures,
                     os.path.relpath(args.out, root), args.seed)
    write_samples(reference, tok, args.out, args.seed, metrics)
    size = sum(os.path.getsize(os.path.join(args.out, f)) for f in os.listdir(args.out))
    print(f"{args.out}: {size / 1e6:.2f} MB: {sorted(os.listdir(args.out))}")
    assert size <= 16e6, "models/default must stay within 16 MB"


if __name__ == "__main__":
    main()
