// The command line a new user meets first: `hadron inspect` on a config-only folder, a model
// folder and a missing one, and the weight-loading progress of a small model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { HADRON } from './server.mjs';

const source = (path) => new URL(`../../${path}`, import.meta.url).pathname;
const hadron = (...args) => spawnSync(HADRON, args, { encoding: 'utf8', timeout: 120000, killSignal: 'SIGKILL' });

test('inspect on a config-only folder prints the config and parameter count, then exits 0', () => {
  const dir = source('tests/data/configs/Qwen__Qwen3-8B');
  for (const arg of [dir, `${dir}/config.json`]) {
    const r = hadron('inspect', arg);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /Qwen3ForCausalLM/);
    assert.match(r.stdout, /parameters: \d+ \(8\.\d+ B\)/);
    assert.match(r.stdout, /checkpoint: no safetensors files in .*Qwen__Qwen3-8B \(config only\)/);
  }
});

test('inspect on a folder with safetensors counts the checkpoint tensors', () => {
  const r = hadron('inspect', source('tests/fixtures/qwen3-tied'));
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /checkpoint: \d+ tensors, \d+\.\d{3} GB/);
});

test('inspect --load-format safetensors on a config-only folder is still an error', () => {
  const r = hadron('inspect', '--load-format', 'safetensors', source('tests/data/configs/Qwen__Qwen3-8B'));
  assert.equal(r.status, 2);
  assert.match(r.stderr, /no \.safetensors files in this folder/);
});

test('inspect on a missing folder exits 2 with the error', () => {
  const r = hadron('inspect', '/nonexistent/model');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /\/nonexistent\/model/);
  assert.equal(r.stdout, '');
});

// (DeepSeek-V3, not implemented as a model yet, is tested in tests/loader/hf_overrides_test.cpp.)
test('inspect --hf-overrides runs a real config with fewer layers', () => {
  const dir = source('tests/data/configs/Qwen__Qwen3-30B-A3B');
  const full = hadron('inspect', dir, '--load-format', 'dummy');
  const reduced = hadron('inspect', dir, '--load-format', 'dummy', '--hf-overrides', '{"num_hidden_layers": 2}');
  assert.equal(full.status, 0, full.stderr);
  assert.equal(reduced.status, 0, reduced.stderr);
  assert.match(full.stdout, /^layers: 48 /m);
  assert.match(reduced.stdout, /^layers: 2 /m);
  const params = (r) => Number(r.stdout.match(/parameters: (\d+)/)[1]);
  assert.ok(params(reduced) < params(full) / 10, `${params(reduced)} vs ${params(full)}`);
});

test('--hf-overrides that is not a JSON object exits 2 naming the flag', () => {
  const dir = source('tests/data/configs/Qwen__Qwen3-30B-A3B');
  for (const bad of ['{num_hidden_layers: 2}', '[2]']) {
    const r = hadron('inspect', dir, '--hf-overrides', bad);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--hf-overrides/);
  }
  const r = hadron('generate', '--model', source('models/default'), '--hf-overrides', '"x"', '--prompt', 'Hi');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--hf-overrides must be a JSON object/);
});

test('generate --hf-overrides reaches the loader: dummy weights run, real ones refuse the dropped layers', () => {
  const args = ['generate', '--model', source('models/default'), '--device', 'cpu', '--prompt', 'Hi',
    '--max-tokens', '2', '--hf-overrides', '{"num_hidden_layers": 1}'];
  const dummy = hadron(...args, '--load-format', 'dummy');
  assert.equal(dummy.status, 0, dummy.stderr);
  const real = hadron(...args);
  assert.equal(real.status, 2);
  assert.match(real.stderr, /unused checkpoint tensor model\.layers\.[1-9]/);
});

test('every command that loads a model lists --hf-overrides in its help', () => {
  for (const command of ['serve', 'generate', 'score', 'inspect']) {
    const r = hadron(command, '--help');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /--hf-overrides/, command);
  }
  for (const mode of ['latency', 'throughput']) {
    const r = hadron('bench', mode, '--help');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /--hf-overrides/, mode);
  }
});

test('a small model reports its loading progress in MB, not as 0.0 of 0.0 GB', () => {
  const r = hadron('generate', '--model', source('models/default'), '--device', 'cpu',
    '--prompt', 'Hello', '--max-tokens', '1');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /loading weights: 100% \(\d+\.\d of \d+\.\d MB, \d+\.\d MB\/s\)/);
  assert.doesNotMatch(r.stderr, /0\.0 of 0\.0 GB/);
});
