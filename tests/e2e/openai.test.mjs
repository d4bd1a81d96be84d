// The official OpenAI client against hadron serve (CPU, the shipped default model).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startServer, metric, settledMetric, post } from './server.mjs';

let server, client, model;

before(async () => {
  server = await startServer();
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused' });
  model = (await client.models.list()).data[0].id;
});

after(async () => {
  const { code } = await server.stop();
  assert.equal(code, 0, 'SIGTERM exits 0');
});

const greedy = { temperature: 0, max_tokens: 24 };

test('models lists the served model', async () => {
  const models = await client.models.list();
  assert.equal(models.data.length, 1);
  assert.equal(models.data[0].object, 'model');
});

test('completions: text, usage and finish reason', async () => {
  const r = await client.completions.create({ model, prompt: 'And God said', ...greedy });
  assert.equal(r.object, 'text_completion');
  assert.equal(r.choices.length, 1);
  assert.ok(r.choices[0].text.length > 0);
  assert.equal(r.choices[0].finish_reason, 'length');
  assert.equal(r.usage.completion_tokens, 24);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + 24);
});

test('completions: stream equals non-stream, with include_usage', async () => {
  const whole = await client.completions.create({ model, prompt: 'In the beginning', ...greedy });
  const stream = await client.completions.create({
    model, prompt: 'In the beginning', ...greedy, stream: true, stream_options: { include_usage: true } });
  let text = '', usage = null, finish = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) { text += c.text; finish = c.finish_reason ?? finish; }
  }
  assert.equal(text, whole.choices[0].text);
  assert.equal(finish, 'length');
  assert.deepEqual(usage, whole.usage);
});

test('completions: many prompts, token-id prompts, n, echo, stop, logprobs', async () => {
  const r = await client.completions.create({ model, prompt: ['a', 'b'], n: 2, ...greedy, max_tokens: 4 });
  assert.deepEqual(r.choices.map((c) => c.index).sort(), [0, 1, 2, 3]);
  const ids = await client.completions.create({ model, prompt: [305, 405, 407], ...greedy });
  const text = await client.completions.create({ model, prompt: 'And God said', ...greedy });
  assert.equal(ids.choices[0].text, text.choices[0].text, 'ids of the same text continue alike');
  const echo = await client.completions.create({ model, prompt: 'And God said', ...greedy, echo: true });
  assert.equal(echo.choices[0].text, 'And God said' + text.choices[0].text);
  const word = text.choices[0].text.trim().split(' ')[1];
  const stopped = await client.completions.create({ model, prompt: 'And God said', ...greedy, stop: [word] });
  assert.ok(!stopped.choices[0].text.includes(word));
  assert.equal(stopped.choices[0].finish_reason, 'stop');
  assert.equal(stopped.choices[0].stop_reason, word, 'vLLM\'s stop_reason names the stop string');
  const lp = await client.completions.create({ model, prompt: 'And God said', ...greedy, logprobs: 3 });
  assert.equal(lp.choices[0].logprobs.tokens.length, 24);
  assert.equal(lp.choices[0].logprobs.tokens.join(''), lp.choices[0].text);
  for (const top of lp.choices[0].logprobs.top_logprobs) assert.ok(Object.keys(top).length >= 1);
});

test('completions: echo with logprobs scores the prompt as well, streamed or not', async () => {
  const ask = { model, prompt: 'And God said', ...greedy, max_tokens: 4, echo: true, logprobs: 2 };
  const r = await client.completions.create(ask);
  const lp = r.choices[0].logprobs;
  assert.equal(lp.tokens.length, r.usage.prompt_tokens + 4);
  assert.equal(lp.tokens.join(''), r.choices[0].text);
  assert.equal(lp.token_logprobs[0], null, 'nothing predicts the first prompt token');
  assert.equal(lp.top_logprobs[0], null);
  for (let i = 1; i < lp.tokens.length; ++i) {
    assert.ok(lp.token_logprobs[i] <= 0);
    const top = lp.top_logprobs[i];  // the 2 most likely, and the token itself if not one of them
    assert.ok([2, 3].includes(Object.keys(top).length));
    assert.equal(top[lp.tokens[i]], lp.token_logprobs[i]);
    assert.equal(lp.text_offset[i], lp.tokens.slice(0, i).join('').length);
  }
  // A prompt token's score is the one generation gives the same token after the same prefix.
  const plain = await client.completions.create({
    model, prompt: [305, 405, 407], ...greedy, max_tokens: 1, logprobs: 0, return_token_ids: true });
  const next = plain.choices[0].token_ids[0];
  const scored = await client.completions.create({
    model, prompt: [305, 405, 407, next], ...greedy, max_tokens: 1, echo: true, logprobs: 0 });
  assert.ok(Math.abs(scored.choices[0].logprobs.token_logprobs[3] -
                     plain.choices[0].logprobs.token_logprobs[0]) < 1e-4);
  // Streamed, with n = 2: each choice's first chunk carries the prompt's tokens.
  const stream = await client.completions.create({ ...ask, n: 2, stream: true });
  const tokens = [[], []];
  for await (const chunk of stream)
    for (const c of chunk.choices) tokens[c.index].push(...(c.logprobs?.tokens ?? []));
  assert.deepEqual(tokens[0], lp.tokens);
  assert.deepEqual(tokens[1], lp.tokens);
});

test('completions: echo with max_tokens 0 returns the prompt alone, scored', async () => {
  const ask = { model, prompt: 'And God said', temperature: 0, max_tokens: 0, echo: true, logprobs: 1 };
  const r = await client.completions.create(ask);
  assert.equal(r.choices[0].text, 'And God said');
  assert.equal(r.choices[0].finish_reason, 'length');
  assert.equal(r.usage.completion_tokens, 0);
  const lp = r.choices[0].logprobs;
  assert.equal(lp.tokens.length, r.usage.prompt_tokens);
  assert.equal(lp.tokens.join(''), 'And God said');
  assert.equal(lp.token_logprobs[0], null);
  // The same scores as an echo that also generates.
  const longer = await client.completions.create({ ...ask, max_tokens: 2 });
  assert.deepEqual(lp.token_logprobs, longer.choices[0].logprobs.token_logprobs.slice(0, lp.tokens.length));
  // Streamed, n = 2: each choice once, the prompt and its scores, no token.
  const stream = await client.completions.create({ ...ask, n: 2, stream: true });
  const texts = ['', ''];
  const finishes = [];
  for await (const chunk of stream)
    for (const c of chunk.choices) {
      texts[c.index] += c.text;
      if (c.finish_reason) finishes.push(c.finish_reason);
    }
  assert.deepEqual(texts, ['And God said', 'And God said']);
  assert.deepEqual(finishes, ['length', 'length']);
  // Without echo there is nothing to return: a clear error.
  await assert.rejects(client.completions.create({ ...ask, echo: false }),
    (e) => e.status === 400 && /echo/.test(e.message));
});

test('chat: message, seed reproducibility, n, logprobs', async () => {
  const messages = [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Who led Israel?' }];
  const r = await client.chat.completions.create({ model, messages, ...greedy });
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.ok(r.choices[0].message.content.length > 0);
  const seeded = { model, messages, temperature: 1, max_tokens: 16, seed: 1234 };
  const a = await client.chat.completions.create(seeded);
  const b = await client.chat.completions.create(seeded);
  assert.equal(a.choices[0].message.content, b.choices[0].message.content);
  const n = await client.chat.completions.create({ ...seeded, n: 3 });
  assert.equal(n.choices.length, 3);
  const lp = await client.chat.completions.create({ model, messages, ...greedy, logprobs: true, top_logprobs: 2 });
  const content = lp.choices[0].logprobs.content;
  assert.equal(content.length, 24);
  assert.equal(content.map((t) => t.token).join(''), lp.choices[0].message.content);
  for (const t of content) assert.equal(t.top_logprobs.length, 2);
});

test('chat: stream deltas concatenate to the non-streamed message', async () => {
  const messages = [{ role: 'user', content: 'Tell me of David.' }];
  const whole = await client.chat.completions.create({ model, messages, ...greedy, n: 2 });
  const stream = await client.chat.completions.create({ model, messages, ...greedy, n: 2, stream: true });
  const text = ['', ''];
  const finish = [null, null];
  for await (const chunk of stream)
    for (const c of chunk.choices) {
      text[c.index] += c.delta.content ?? '';
      finish[c.index] = c.finish_reason ?? finish[c.index];
    }
  for (const i of [0, 1]) {
    assert.equal(text[i], whole.choices[i].message.content);
    assert.equal(finish[i], whole.choices[i].finish_reason);
  }
});

test('chat: tools pass through the template and the response keeps its shape', async () => {
  const tools = [{ type: 'function', function: { name: 'get_weather', description: 'Weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
  const messages = [{ role: 'user', content: 'Weather in Jerusalem?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function',
      function: { name: 'get_weather', arguments: '{"city": "Jerusalem"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: 'sunny' }];
  const r = await client.chat.completions.create({ model, messages, tools, ...greedy });
  assert.ok(['stop', 'length', 'tool_calls'].includes(r.choices[0].finish_reason));
  assert.equal(r.choices[0].message.role, 'assistant');
  await assert.rejects(client.chat.completions.create({ model, messages, tools, tool_choice: 'required', ...greedy }),
    (e) => e.status === 400);
});

// vLLM's per-request chat_template: a 400 unless the server was started with
// --trust-request-chat-template; then the request's template is the one rendered.
const bracketed = '{% for m in messages %}<<{{ m.content }}>>{% endfor %}';
const hello = [{ role: 'user', content: 'Hello there' }];

test('chat: a request chat_template is refused with 400 without --trust-request-chat-template', async () => {
  await assert.rejects(client.chat.completions.create({ model, messages: hello, chat_template: bracketed, ...greedy }),
    (e) => e.status === 400 && e.error.type === 'invalid_request_error' && e.error.param === 'chat_template' &&
      /--trust-request-chat-template/.test(e.message));
  const r = await post(server.url, '/tokenize', { model, messages: hello, chat_template: bracketed });
  assert.equal(r.status, 400, r.text);
  assert.equal(r.json.error.param, 'chat_template');
});

test('chat: with --trust-request-chat-template the request template is rendered', async () => {
  const trusting = await startServer(['--trust-request-chat-template']);
  try {
    const c = new OpenAI({ baseURL: `${trusting.url}/v1`, apiKey: 'unused' });
    const own = await post(trusting.url, '/tokenize', { model, messages: hello, chat_template: bracketed });
    const text = await post(trusting.url, '/tokenize', { model, prompt: '<<Hello there>>', add_special_tokens: false });
    const plain = await post(trusting.url, '/tokenize', { model, messages: hello });
    assert.equal(own.status, 200, own.text);
    assert.deepEqual(own.json.tokens, text.json.tokens);
    assert.notDeepEqual(plain.json.tokens, own.json.tokens);
    const r = await c.chat.completions.create({ model, messages: hello, chat_template: bracketed, ...greedy });
    assert.equal(r.usage.prompt_tokens, own.json.count);
    await assert.rejects(c.chat.completions.create({ model, messages: hello, chat_template: '{% if %}', ...greedy }),
      (e) => e.status === 400 && e.error.param === 'chat_template');
  } finally {
    assert.equal((await trusting.stop()).code, 0);
  }
});

test('a disconnected stream is aborted and its KV freed', async () => {
  const aborts = await metric(server.url, 'hadron_requests_total{model_name="models/default",outcome="abort"}');
  const controller = new AbortController();
  const stream = await client.completions.create(
    { model, prompt: 'And', max_tokens: 900, ignore_eos: true, stream: true },
    { signal: controller.signal });
  let n = 0;
  try {
    for await (const _ of stream) {
      if (++n === 5) {
        controller.abort();
        break;
      }
    }
  } catch { /* the SDK may report the abort as an error */ }
  assert.equal(n, 5);
  for (let i = 0; i < 100; i++) {
    if (await metric(server.url, 'hadron_requests_total{model_name="models/default",outcome="abort"}') > aborts) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(await metric(server.url, 'hadron_requests_total{model_name="models/default",outcome="abort"}'), aborts + 1);
  // The engine drops the request between steps, right after the HTTP side counted the abort.
  assert.equal(await settledMetric(server.url, 'hadron_num_requests_running', 0), 0);
  assert.equal(await settledMetric(server.url, 'hadron_kv_cache_usage_perc', 0), 0);
});

test('a client that leaves a non-streamed request aborts it too', async () => {
  const name = 'hadron_requests_total{model_name="models/default",outcome="abort"}';
  const aborts = await metric(server.url, name);
  const controller = new AbortController();
  const request = fetch(`${server.url}/v1/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, signal: controller.signal,
    body: JSON.stringify({ model, prompt: 'And', max_tokens: 900, ignore_eos: true }) });
  await new Promise((r) => setTimeout(r, 300));
  controller.abort();
  await assert.rejects(request);
  for (let i = 0; i < 100 && await metric(server.url, name) === aborts; i++)
    await new Promise((r) => setTimeout(r, 50));
  assert.equal(await metric(server.url, name), aborts + 1);
  // The engine drops the request between steps, right after the HTTP side counted the abort.
  assert.equal(await settledMetric(server.url, 'hadron_num_requests_running', 0), 0);
  assert.equal(await settledMetric(server.url, 'hadron_kv_cache_usage_perc', 0), 0);
});
