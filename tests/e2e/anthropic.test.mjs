// The Anthropic SDK against hadron serve's /v1/messages.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import Ajv from 'ajv';
import { startServer } from './server.mjs';

let server, client;

before(async () => {
  server = await startServer(['--api-key', 'sk-test']);
  client = new Anthropic({ baseURL: server.url, apiKey: 'sk-test' });
});

after(async () => { await server.stop(); });

test('messages: non-stream', async () => {
  const r = await client.messages.create({ model: 'models/default', max_tokens: 20, temperature: 0,
    system: 'Be brief.', messages: [{ role: 'user', content: 'Who was Moses?' }] });
  assert.equal(r.type, 'message');
  assert.equal(r.role, 'assistant');
  assert.equal(r.content[0].type, 'text');
  assert.ok(r.content[0].text.length > 0);
  if (r.stop_reason === 'max_tokens') assert.equal(r.usage.output_tokens, 20);
  else assert.ok(r.stop_reason === 'end_turn' && r.usage.output_tokens <= 20, r.stop_reason);
});

test('messages: stop_sequences end the message with stop_reason stop_sequence', async () => {
  const request = { model: 'models/default', max_tokens: 30, temperature: 0,
    messages: [{ role: 'user', content: 'Who was Moses?' }] };
  const free = await client.messages.create(request);
  const words = free.content[0].text.trim().split(' ');
  assert.ok(words.length >= 3, free.content[0].text);
  const r = await client.messages.create({ ...request, stop_sequences: [words[1]] });
  assert.equal(r.stop_reason, 'stop_sequence');
  assert.equal(r.stop_sequence, words[1]);
  assert.ok(!r.content[0].text.includes(words[1]));
});

test('messages: the stream assembles to the non-streamed message', async () => {
  const request = { model: 'models/default', max_tokens: 20, temperature: 0,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Sing of Zion.' }] }] };
  const whole = await client.messages.create(request);
  const stream = client.messages.stream(request);
  const events = [];
  stream.on('streamEvent', (e) => events.push(e.type));
  const final = await stream.finalMessage();
  assert.equal(final.content[0].text, whole.content[0].text);
  assert.equal(final.stop_reason, whole.stop_reason);
  assert.equal(events[0], 'message_start');
  assert.equal(events.at(-1), 'message_stop');
});

test('messages: tools and tool results pass through; a wrong key is 401', async () => {
  const r = await client.messages.create({ model: 'models/default', max_tokens: 8, temperature: 0,
    tools: [{ name: 'lookup', description: 'Look up a verse', input_schema: { type: 'object', properties: { ref: { type: 'string' } } } }],
    messages: [{ role: 'user', content: 'Find John 3:16' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { ref: 'John 3:16' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'For God so loved' }] }] });
  assert.equal(r.type, 'message');
  const bad = new Anthropic({ baseURL: server.url, apiKey: 'wrong' });
  await assert.rejects(bad.messages.create({ model: 'models/default', max_tokens: 4,
    messages: [{ role: 'user', content: 'hi' }] }), (e) => e.status === 401);
});

test('messages: tool_choice any and tool constrain the output to one call of an offered tool', async () => {
  const hermes = await startServer(['--tool-call-parser', 'hermes']);
  try {
    const c = new Anthropic({ baseURL: hermes.url, apiKey: 'unused' });
    const weather = { type: 'object', properties: {
      city: { type: 'string', maxLength: 10 }, unit: { enum: ['C', 'F'] } },
    required: ['city', 'unit'], additionalProperties: false };
    const clock = { type: 'object', properties: { zone: { type: 'string', pattern: '^[A-Z]{3}$' } },
      required: ['zone'], additionalProperties: false };
    const tools = [{ name: 'get_weather', input_schema: weather }, { name: 'get_time', input_schema: clock }];
    const argsValid = { get_weather: new Ajv().compile(weather), get_time: new Ajv().compile(clock) };
    const messages = [{ role: 'user', content: 'Weather in Paris?' }];
    const cases = [[{ type: 'tool', name: 'get_time' }, 'get_time'], [{ type: 'any' }, null],
      [{ type: 'any' }, null]];
    for (const [toolChoice, expected] of cases) {
      const r = await c.messages.create({ model: 'models/default', max_tokens: 300, temperature: 1,
        tools, tool_choice: toolChoice, messages });
      assert.equal(r.stop_reason, 'tool_use', JSON.stringify(r.content));
      const uses = r.content.filter((b) => b.type === 'tool_use');
      assert.equal(uses.length, 1, JSON.stringify(r.content));
      if (expected) assert.equal(uses[0].name, expected);
      assert.ok(uses[0].name in argsValid, uses[0].name);
      assert.ok(argsValid[uses[0].name](uses[0].input), JSON.stringify(uses[0].input));
    }
    await assert.rejects(c.messages.create({ model: 'models/default', max_tokens: 5, tools, messages,
      tool_choice: { type: 'tool', name: 'nope' } }), (e) => e.status === 400);
    const free = await c.messages.create({ model: 'models/default', max_tokens: 5, tools, messages,
      tool_choice: { type: 'none' } });
    assert.equal(free.type, 'message');
  } finally {
    await hermes.stop();
  }
});
