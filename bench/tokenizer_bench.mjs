// Single-thread encode and decode throughput of Hugging Face tokenizers (Rust, through
// @anush008/tokenizers from tests/tokenizer/node_modules) on the same document as
// bench/tokenizer_bench.cpp: the tokenizer test corpus, samples joined by "\n", repeated
// REPEATS times.
// Calls are awaited one at a time, so one thread tokenizes.
//
// usage: node bench/tokenizer_bench.mjs TOKENIZER_JSON [SECONDS_PER_MEASUREMENT]
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(path.join(root, "tests/tokenizer/package.json"));
const { Tokenizer } = require("@anush008/tokenizers");

const REPEATS = 32;

function corpusDocument() {
  const dir = path.join(root, "tests/tokenizer/corpus");
  let document = Buffer.alloc(0);
  for (const file of fs.readdirSync(dir).sort()) {
    const content = fs.readFileSync(path.join(dir, file)).toString("latin1")
      .split("\n<|hadron-sample-break|>\n").join("\n");
    document = Buffer.concat([document, Buffer.from(content + "\n", "latin1")]);
  }
  return Buffer.concat(Array(REPEATS).fill(document));
}

async function callsPerSecond(seconds, body) {
  await body();
  let calls = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < seconds) {
    await body();
    calls++;
    elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  }
  return calls / elapsed;
}

const [file, secondsArg] = process.argv.slice(2);
const seconds = Number(secondsArg ?? 3);
const tokenizer = Tokenizer.fromFile(file);
const bytes = corpusDocument();
const document = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
const ids = Array.from((await tokenizer.encode(document, null, { addSpecialTokens: false })).getIds());
const text = await tokenizer.decode(ids, false);
const encodes = await callsPerSecond(seconds, () => tokenizer.encode(document, null, { addSpecialTokens: false }));
const decodes = await callsPerSecond(seconds, () => tokenizer.decode(ids, false));
console.log(JSON.stringify({
  document_bytes: bytes.length, ids: ids.length,
  encode_mb_s: +(encodes * bytes.length / 1e6).toFixed(2),
  decode_mb_s: +(decodes * Buffer.byteLength(text, "utf8") / 1e6).toFixed(2),
}));
