// --tensor-parallel-size on the CPU (ranks as threads, ADR 0009) with the shipped default model:
// generate, score and serve at TP2 give what one rank gives, and sizes the model cannot be
// split into exit 2 naming the config field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HADRON, post, startServer } from './server.mjs';

const source = (path) => new URL(`../../${path}`, import.meta.url).pathname;
const hadron = (...args) => spawnSync(HADRON, args, { encoding: 'utf8', timeout: 120000, killSignal: 'SIGKILL' });
const model = ['--model', source('models/default'), '--device', 'cpu'];

test('generate --tensor-parallel-size 2 prints the greedy text of one rank', () => {
  const args = ['generate', ...model, '--prompt', 'The old lighthouse keeper', '--max-tokens', '48',
    '--temperature', '0', '--ignore-eos'];
  const single = hadron(...args);
  const sharded = hadron(...args, '--tensor-parallel-size', '2');
  assert.equal(single.status, 0, single.stderr);
  assert.equal(sharded.status, 0, sharded.stderr);
  assert.ok(single.stdout.length > 40, single.stdout);
  assert.equal(sharded.stdout, single.stdout);
});

// float32 values of a version-1 .npy file.
function readNpy(path) {
  const bytes = readFileSync(path);
  const headerLength = bytes.readUInt16LE(8);
  assert.match(bytes.toString('latin1', 10, 10 + headerLength), /'descr': '<f4'/);
  const data = bytes.subarray(10 + headerLength);
  return new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.length));
}

test('score --tensor-parallel-size 2 gives the logits of one rank within fp32 tolerance', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hadron-tp-'));
  writeFileSync(join(dir, 'tokens.txt'), '12 345 67 890 1234 56 7 89 1011 12 13 1415 16 1718');
  const logits = (tp) => {
    const out = join(dir, `tp${tp}.npy`);
    const r = hadron('score', ...model, '--tokens-file', join(dir, 'tokens.txt'), '--dump-logits', out,
      '--tensor-parallel-size', String(tp));
    assert.equal(r.status, 0, r.stderr);
    return readNpy(out);
  };
  const single = logits(1), sharded = logits(2);
  assert.equal(sharded.length, single.length);
  let maxDiff = 0, maxLogit = 0;
  for (let i = 0; i < single.length; i++) {
    maxDiff = Math.max(maxDiff, Math.abs(sharded[i] - single[i]));
    maxLogit = Math.max(maxLogit, Math.abs(single[i]));
  }
  assert.ok(maxDiff / maxLogit <= 1e-5, `max|diff|/max|logit| = ${maxDiff / maxLogit}`);
});

test('serve --tensor-parallel-size 2 answers with the greedy text of one rank', async () => {
  const body = { prompt: 'Once upon a time', max_tokens: 24, temperature: 0 };
  const texts = [];
  for (const tp of ['1', '2']) {
    const server = await startServer(['--model', source('models/default'), '--tensor-parallel-size', tp]);
    try {
      const r = await post(server.url, '/v1/completions', body);
      assert.equal(r.status, 200, r.text);
      texts.push(r.json.choices[0].text);
    } finally {
      await server.stop();
    }
  }
  assert.ok(texts[0].length > 0);
  assert.equal(texts[1], texts[0]);
});

test('a tensor-parallel size the heads cannot be split into exits 2 naming them', () => {
  const r = hadron('generate', ...model, '--prompt', 'Hi', '--tensor-parallel-size', '3');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--tensor-parallel-size 3 does not divide num_attention_heads \(4\)/);
  const zero = hadron('generate', ...model, '--prompt', 'Hi', '--tensor-parallel-size', '0');
  assert.equal(zero.status, 2);
  assert.match(zero.stderr, /--tensor-parallel-size must be in \[1, 64\]/);
});
