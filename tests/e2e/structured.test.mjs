// Structured output through the official OpenAI client: every constrained output must
// validate (JSON Schema by ajv, an independent validator), whatever the model would say.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Ajv from 'ajv';
import { startServer, post } from './server.mjs';

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

// Every string and number bounded, so a whole object fits in max_tokens whatever the model.
const person = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 12 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    role: { enum: ['admin', 'user', 'guest'] },
    tags: { type: 'array', items: { type: 'string', maxLength: 6 }, maxItems: 2 },
    id: { type: 'string', format: 'uuid' },
    manager: { anyOf: [{ $ref: '#/$defs/ref' }, { type: 'null' }] },
  },
  required: ['name', 'age', 'role', 'manager'],
  additionalProperties: false,
  $defs: { ref: { type: 'object', properties: { code: { type: 'string', pattern: '^[A-Z]{2}[0-9]{2}$' } },
    required: ['code'], additionalProperties: false } },
};
const validate = new Ajv({ strict: false }).compile(person);
const uuid = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

function checkPerson(text) {
  const value = JSON.parse(text);
  assert.ok(validate(value), `${text}: ${JSON.stringify(validate.errors)}`);
  if (value.id !== undefined) assert.match(value.id, uuid);  // ajv has no formats by default
  return value;
}

test('chat response_format json_schema: outputs parse and validate (greedy, seeded, n > 1)', async () => {
  const base = {
    model, max_tokens: 400,
    messages: [{ role: 'user', content: 'Describe a person as JSON.' }],
    response_format: { type: 'json_schema', json_schema: { name: 'person', schema: person, strict: true } },
  };
  const greedy = await client.chat.completions.create({ ...base, temperature: 0 });
  assert.equal(greedy.choices[0].finish_reason, 'stop');
  checkPerson(greedy.choices[0].message.content);
  const sampled = await client.chat.completions.create({ ...base, temperature: 1.0, n: 3, seed: 11 });
  assert.equal(sampled.choices.length, 3);
  for (const c of sampled.choices) {
    assert.equal(c.finish_reason, 'stop');
    checkPerson(c.message.content);
  }
  const again = await client.chat.completions.create({ ...base, temperature: 1.0, n: 3, seed: 11 });
  assert.deepEqual(again.choices.map((c) => c.message.content), sampled.choices.map((c) => c.message.content),
    'the same seed gives the same constrained outputs');
});

test('chat response_format json_schema: stream equals non-stream, logprobs per token', async () => {
  const body = {
    model, max_tokens: 400, temperature: 0, logprobs: true, top_logprobs: 2,
    messages: [{ role: 'user', content: 'A person, please.' }],
    response_format: { type: 'json_schema', json_schema: { name: 'person', schema: person } },
  };
  const whole = await client.chat.completions.create(body);
  const stream = await client.chat.completions.create({ ...body, stream: true });
  let text = '';
  for await (const chunk of stream) for (const c of chunk.choices) text += c.delta.content ?? '';
  assert.equal(text, whole.choices[0].message.content);
  checkPerson(text);
  const lp = whole.choices[0].logprobs.content;
  assert.ok(lp.length > 0);
  assert.equal(lp.length, whole.usage.completion_tokens);
  // The last token may be the end-of-sequence token, which the content leaves out.
  assert.ok(lp.map((t) => t.token).join('').startsWith(whole.choices[0].message.content));
});

test('chat response_format json_object gives a JSON object', async () => {
  const r = await client.chat.completions.create({
    model, max_tokens: 300, temperature: 0.8, seed: 5,
    messages: [{ role: 'user', content: 'Some JSON.' }],
    response_format: { type: 'json_object' },
  });
  const c = r.choices[0];
  if (c.finish_reason === 'stop') {
    const value = JSON.parse(c.message.content);
    assert.equal(typeof value, 'object');
    assert.ok(value !== null && !Array.isArray(value));
  } else {  // unbounded grammar: a cut-off output must still be a prefix of an object
    assert.equal(c.message.content.trimStart()[0], '{');
  }
});

test('completions: guided_regex, structured_outputs regex and choice, guided_choice', async () => {
  for (const seed of [1, 2, 3]) {
    const r = await client.completions.create({
      model, prompt: 'Call me at', max_tokens: 40, temperature: 1, seed,
      guided_regex: '\\(\\d{3}\\) \\d{3}-\\d{4}',
    });
    assert.match(r.choices[0].text, /^\(\d{3}\) \d{3}-\d{4}$/);
    assert.equal(r.choices[0].finish_reason, 'stop');
  }
  const so = await client.completions.create({
    model, prompt: 'Date:', max_tokens: 40, temperature: 1, seed: 9,
    structured_outputs: { regex: '20[0-9]{2}-(0[1-9]|1[0-2])-[0-3][0-9]' },
  });
  assert.match(so.choices[0].text, /^20\d{2}-(0[1-9]|1[0-2])-[0-3]\d$/);
  const choices = ['Paris', 'London', 'New York City'];
  for (const body of [{ guided_choice: choices }, { structured_outputs: { choice: choices } }]) {
    const r = await client.completions.create({
      model, prompt: 'The capital:', max_tokens: 20, temperature: 1, n: 4, seed: 3, ...body });
    for (const c of r.choices) assert.ok(choices.includes(c.text), c.text);
  }
});

test('chat: guided_grammar (GBNF) and structured_outputs json', async () => {
  const grammar = 'root ::= "The answer is " num "."\nnum ::= [1-9] [0-9]{0,2}';
  const r = await client.chat.completions.create({
    model, max_tokens: 30, temperature: 1, seed: 4, guided_grammar: grammar,
    messages: [{ role: 'user', content: 'What is the answer?' }] });
  assert.match(r.choices[0].message.content, /^The answer is [1-9]\d{0,2}\.$/);
  const j = await client.chat.completions.create({
    model, max_tokens: 400, temperature: 0,
    structured_outputs: { json: person },
    messages: [{ role: 'user', content: 'JSON?' }] });
  checkPerson(j.choices[0].message.content);
});

test('bad schemas, regexes and grammars answer 400 naming the field and the problem', async () => {
  const cases = [
    [{ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {
      type: 'object', properties: { a: { type: 'array', uniqueItems: true } } } } } },
     'response_format.json_schema.schema', '/properties/a/uniqueItems'],
    [{ guided_regex: 'a(?=b)' }, 'guided_regex', 'lookaround'],
    [{ guided_grammar: 'root ::= missing' }, 'guided_grammar', "'missing'"],
    [{ structured_outputs: { json: { type: 'string', minLength: 3, maxLength: 1 } } },
     'structured_outputs.json', 'no string'],
    [{ guided_choice: [] }, 'guided_choice', 'non-empty'],
    [{ guided_regex: 'a', guided_choice: ['b'] }, 'guided_choice', 'give one'],
    [{ response_format: { type: 'xml' } }, 'response_format', 'xml'],
  ];
  for (const [extra, param, words] of cases) {
    const r = await post(server.url, '/v1/chat/completions', {
      model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }], ...extra });
    assert.equal(r.status, 400, JSON.stringify(extra));
    assert.equal(r.json.error.param, param, r.text);
    assert.ok(r.json.error.message.includes(words), r.text);
  }
});

test('tool_choice required and named: one call whose arguments follow the tool schema', async () => {
  const hermes = await startServer(['--tool-call-parser', 'hermes']);
  try {
    const c = new OpenAI({ baseURL: `${hermes.url}/v1`, apiKey: 'unused' });
    const weather = { type: 'object', properties: {
      city: { type: 'string', maxLength: 10 }, unit: { enum: ['C', 'F'] } },
    required: ['city', 'unit'], additionalProperties: false };
    const clock = { type: 'object', properties: { zone: { type: 'string', pattern: '^[A-Z]{3}$' } },
      required: ['zone'], additionalProperties: false };
    const tools = [
      { type: 'function', function: { name: 'get_weather', parameters: weather } },
      { type: 'function', function: { name: 'get_time', parameters: clock } },
    ];
    const argsValid = { get_weather: new Ajv().compile(weather), get_time: new Ajv().compile(clock) };
    const messages = [{ role: 'user', content: 'Weather in Paris?' }];
    const named = await c.chat.completions.create({
      model, messages, tools, max_tokens: 300, temperature: 1, seed: 2,
      tool_choice: { type: 'function', function: { name: 'get_time' } } });
    const calls = named.choices[0].message.tool_calls;
    assert.equal(calls.length, 1, JSON.stringify(named.choices[0].message));
    assert.equal(calls[0].function.name, 'get_time');
    assert.ok(argsValid.get_time(JSON.parse(calls[0].function.arguments)), calls[0].function.arguments);
    const required = await c.chat.completions.create({
      model, messages, tools, max_tokens: 300, temperature: 1, seed: 3, n: 3, tool_choice: 'required' });
    for (const choice of required.choices) {
      const [call] = choice.message.tool_calls;
      assert.ok(call.function.name in argsValid, call.function.name);
      assert.ok(argsValid[call.function.name](JSON.parse(call.function.arguments)), call.function.arguments);
    }
    const bad = await post(hermes.url, '/v1/chat/completions', {
      model, messages, tools, max_tokens: 5, tool_choice: { type: 'function', function: { name: 'nope' } } });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.param, 'tool_choice');
  } finally {
    await hermes.stop();
  }
});
