// Bad input never hurts the server: each case gets the right 4xx in OpenAI's error shape and a
// normal request still succeeds after it. Plus a full queue (429), SIGTERM draining, and a
// model that cannot load (missing, or failing after the server listens) or is interrupted while
// loading: the process ends with the error instead of hanging.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HADRON, startServer, post } from './server.mjs';

const ok = { prompt: 'And God said', max_tokens: 4, temperature: 0 };
const chat = (messages, extra = {}) => ({ messages, max_tokens: 4, ...extra });
const deep = '['.repeat(200) + ']'.repeat(200);

const cases = [
  ['/v1/completions', '{not json', 400],
  ['/v1/completions', Buffer.from('{"prompt": "\xff\xfe"}', 'latin1'), 400],  // invalid UTF-8
  ['/v1/completions', Buffer.concat([Buffer.from('{"prompt": "a'), Buffer.from([0xc3]), Buffer.from('"}')]), 400],
  ['/v1/completions', '[1, 2]', 422],
  ['/v1/completions', `{"prompt": ${deep}}`, 400],
  ['/v1/completions', {}, 422],
  ['/v1/completions', { ...ok, prompt: 5 }, 422],
  ['/v1/completions', { ...ok, prompt: '' }, 400],
  ['/v1/completions', { ...ok, prompt: [999999] }, 400],
  ['/v1/completions', { ...ok, model: 'gpt-4' }, 404],
  ['/v1/completions', { ...ok, max_tokens: 'many' }, 422],
  ['/v1/completions', { ...ok, max_tokens: 0 }, 400],
  ['/v1/completions', { ...ok, max_tokens: 100000 }, 400],
  ['/v1/completions', { ...ok, prompt: 'word '.repeat(2000) }, 400],
  ['/v1/completions', { ...ok, temperature: -1 }, 400],
  ['/v1/completions', { ...ok, top_p: 2 }, 400],
  ['/v1/completions', { ...ok, n: 100 }, 400],
  ['/v1/completions', { ...ok, logprobs: 50 }, 400],
  ['/v1/completions', { ...ok, stop: Array.from({ length: 50 }, (_, i) => `s${i}`) }, 400],
  ['/v1/completions', { ...ok, stop: ['x'.repeat(5000)] }, 400],
  ['/v1/completions', { ...ok, logit_bias: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [String(i), 1])) }, 400],
  ['/v1/completions', { ...ok, logit_bias: { 'abc': 1 } }, 400],
  ['/v1/completions', { ...ok, response_format: { type: 'xml' } }, 400],
  ['/v1/completions', { ...ok, guided_regex: '(a' }, 400],
  ['/v1/completions', { ...ok, seed: 'x' }, 422],
  ['/v1/chat/completions', chat('hi'), 422],
  ['/v1/chat/completions', chat([]), 400],
  ['/v1/chat/completions', chat([{ role: 'user' }]), 400],
  ['/v1/chat/completions', chat([{ role: 'robot', content: 'x' }]), 400],
  ['/v1/chat/completions', chat([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }]), 400],
  ['/v1/chat/completions', chat(Array.from({ length: 5000 }, () => ({ role: 'user', content: 'x' }))), 400],
  ['/v1/chat/completions', chat([{ role: 'user', content: 'x' }], { tools: 'none' }), 422],
  ['/v1/chat/completions', chat([{ role: 'user', content: 'x' }], { top_logprobs: 3 }), 400],
  ['/v1/messages', { messages: [{ role: 'user', content: 'x' }] }, 422],
  ['/v1/messages', { max_tokens: 4, messages: [{ role: 'system', content: 'x' }] }, 400],
  ['/tokenize', {}, 422],
  ['/detokenize', { tokens: [-1] }, 400],
  ['/v1/nothing', {}, 404],
];

test('bad-input matrix: the right 4xx, then a normal request succeeds', async () => {
  const server = await startServer();
  try {
    for (const [path, body, status] of cases) {
      const r = await post(server.url, path, body);
      assert.equal(r.status, status, `${path} ${String(JSON.stringify(body)).slice(0, 120)}: ${r.text.slice(0, 200)}`);
      const error = path === '/v1/messages' ? r.json.error : r.json.error;
      assert.equal(typeof error.message, 'string');
      assert.equal(typeof error.type, 'string');
      const after = await post(server.url, '/v1/completions', ok);
      assert.equal(after.status, 200, `after ${path}: ${after.text}`);
    }
    const huge = await post(server.url, '/v1/completions', { prompt: 'x'.repeat(40 << 20) });
    assert.equal(huge.status, 413);
    assert.equal((await post(server.url, '/v1/completions', ok)).status, 200);
  } finally {
    const { code } = await server.stop();
    assert.equal(code, 0);
  }
});

test('a full queue answers 429; SIGTERM drains running requests and exits 0', async () => {
  const server = await startServer(['--max-queued-requests', '2']);
  const long = { prompt: 'And', max_tokens: 200, ignore_eos: true, temperature: 0 };
  const running = [post(server.url, '/v1/completions', long), post(server.url, '/v1/completions', long)];
  await new Promise((r) => setTimeout(r, 200));
  const refused = await post(server.url, '/v1/completions', ok);
  assert.equal(refused.status, 429, refused.text);
  assert.equal(refused.json.error.type, 'rate_limit_error');
  const stopped = server.stop();
  await new Promise((r) => setTimeout(r, 100));
  const health = await fetch(`${server.url}/health`).catch(() => null);
  if (health) assert.equal(health.status, 503, 'draining');
  for (const r of await Promise.all(running)) {
    assert.equal(r.status, 200);
    assert.equal(r.json.usage.completion_tokens, 200, 'in-flight requests finish');
  }
  assert.equal((await stopped).code, 0);
});

const serveArgs = ['serve', '--port', '0', '--device', 'cpu', '--host', '127.0.0.1'];
// Killed with SIGKILL after 60 s: a hang shows as signal SIGKILL, not as a stuck test.
const serveSync = (args) =>
  spawnSync(HADRON, [...serveArgs, ...args], { encoding: 'utf8', timeout: 60000, killSignal: 'SIGKILL' });

test('a model that cannot load ends the server with the error', () => {
  const missing = serveSync(['--model', '/nonexistent/model']);
  assert.equal(missing.signal, null, 'exited by itself');
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /--model \/nonexistent\/model: no such file or folder/);

  // config.json but no weights: the failure comes after the server has started listening.
  const dir = mkdtempSync(join(tmpdir(), 'hadron-e2e-'));
  try {
    copyFileSync(new URL('../../models/default/config.json', import.meta.url), join(dir, 'config.json'));
    const noWeights = serveSync(['--model', dir]);
    assert.equal(noWeights.signal, null, `exited by itself:\n${noWeights.stderr}`);
    assert.notEqual(noWeights.status, 0);
    assert.match(noWeights.stderr, /listening on/);
    assert.match(noWeights.stderr, /no \.safetensors files/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a second server on a port already served fails to start', async () => {
  const server = await startServer();
  try {
    const port = new URL(server.url).port;
    const second = spawnSync(HADRON, ['serve', '--port', port, '--device', 'cpu', '--host', '127.0.0.1'],
      { encoding: 'utf8', timeout: 60000, killSignal: 'SIGKILL' });
    assert.equal(second.signal, null, `exited by itself:\n${second.stderr}`);
    assert.equal(second.status, 2);
    assert.match(second.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}`));
    assert.equal((await post(server.url, '/v1/completions', ok)).status, 200);
  } finally {
    assert.equal((await server.stop()).code, 0);
  }
});

const bigConfig = new URL('../data/configs/Qwen__Qwen3-0.6B', import.meta.url).pathname;
test('SIGTERM while the model loads ends the process at once', async () => {
  // Qwen3-0.6B with dummy weights: 1.2 GB generated with a progress line per quarter.
  const child = spawn(HADRON, [...serveArgs, '--model', bigConfig, '--load-format', 'dummy'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  await new Promise((resolve) => child.stderr.on('data', (chunk) => {
    log += chunk;
    if (/loading weights: 25%/.test(log)) resolve();
  }));
  child.kill('SIGTERM');
  const { code, signal } = await exited;
  assert.equal(signal, null, log);
  assert.equal(code, 128 + 15);
  assert.match(log, /SIGTERM while loading the model; exiting/);
  assert.doesNotMatch(log, /serve: ready/);
});

test('while the model loads, the model API answers 503 "still loading"', async () => {
  const child = spawn(HADRON, [...serveArgs, '--model', bigConfig, '--load-format', 'dummy'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise((resolve) => child.stderr.on('data', (chunk) => {
    log += chunk;
    const m = log.match(/listening on (http:\/\/[^ ]+) /);
    if (m) resolve(m[1]);
  }));
  let checked = 0;
  try {
    for (const [path, body] of [['/v1/completions', { prompt: [1, 2, 3], max_tokens: 3 }], ['/v1/models', null],
                                ['/tokenize', { prompt: 'hi' }], ['/detokenize', { tokens: [1, 2] }]]) {
      const r = body ? await post(url, path, body) : await fetch(`${url}${path}`).then(async (x) => ({ status: x.status, text: await x.text() }));
      if (/serve: ready/.test(log)) break;  // the load ended first: nothing left to check
      assert.equal(r.status, 503, `${path} while loading: ${r.text}`);
      assert.match(r.text, /the model is still loading/);
      checked += 1;
    }
    assert.ok(checked > 0, 'at least the first request came while the model loaded');
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
});

test('bench serve reports completed runs, and the server\'s message for failed ones', async () => {
  const server = await startServer();
  try {
    const bench = (extra) => {
      const r = spawnSync(HADRON, ['bench', 'serve', '--url', server.url, '--num-prompts', '3', '--output-len', '4', '--json', ...extra],
        { encoding: 'utf8', timeout: 60000, killSignal: 'SIGKILL' });
      assert.equal(r.status, 0, r.stderr);
      return JSON.parse(r.stdout);
    };
    const fine = bench(['--input-len', '16']);
    assert.equal(fine.completed, 3);
    assert.equal(fine.failed, 0);
    const tooLong = bench(['--input-len', '2000']);  // models/default holds 1024 positions
    assert.equal(tooLong.completed, 0);
    assert.equal(tooLong.failed, 3);
    assert.match(tooLong.first_error, /^HTTP 400: .*maximum context length is 1024 tokens/);
  } finally {
    assert.equal((await server.stop()).code, 0);
  }
});
