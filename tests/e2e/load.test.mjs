// 64 concurrent streaming clients for 60 s (HADRON_LOAD_SECONDS): every stream equals the
// non-streamed greedy text of its prompt (no lost or duplicated tokens), no 5xx, flat memory.
// The KV pool is kept small (512 blocks) so that every block has been touched once the run is
// warm: fresh KV pages entering RSS would otherwise look like growth.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startServer } from './server.mjs';

const seconds = Number(process.env.HADRON_LOAD_SECONDS ?? 60);
const clients = 64;
const prompts = ['And God said', 'In the beginning', 'The LORD is my shepherd', 'Blessed are',
  'And it came to pass', 'Hear, O Israel', 'Thus saith the LORD', 'Now the serpent'];

let server;
// A run that fails or times out never reaches its own stop: without this the server would keep
// node (and ctest) waiting until ctest's own timeout.
after(() => { server?.child.kill('SIGKILL'); });

test(`${clients} streaming clients for ${seconds} s`, { timeout: (seconds + 120) * 1000 }, async () => {
  server = await startServer(['--num-kv-blocks', '512']);
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const request = (prompt, i) => ({ model: 'models/default', prompt, temperature: 0, max_tokens: 16 + (i % 5) * 8 });
  const reference = new Map();
  for (const p of prompts)
    for (let i = 0; i < 5; i++)
      reference.set(`${p}|${i}`, (await client.completions.create(request(p, i))).choices[0].text);
  const rssStart = server.rssKiB();
  const deadline = Date.now() + seconds * 1000;
  let completed = 0, mismatches = 0, errors = 0;
  let rssMid = 0;
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    for (let k = 0; Date.now() < deadline; k++) {
      const p = prompts[(c + k) % prompts.length], i = (c * 7 + k) % 5;
      try {
        const stream = await client.completions.create({ ...request(p, i), stream: true });
        let text = '';
        for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
        if (text !== reference.get(`${p}|${i}`)) mismatches++;
        completed++;
        if (completed === 400) rssMid = server.rssKiB();
      } catch (e) {
        errors++;
        console.error(e.status, e.message);
      }
    }
  }));
  const rssEnd = server.rssKiB();
  console.log(`completed ${completed} streams, ${mismatches} mismatches, ${errors} errors; ` +
    `RSS ${rssStart} -> ${rssMid} -> ${rssEnd} KiB`);
  assert.equal(errors, 0);
  assert.equal(mismatches, 0);
  assert.ok(completed > clients, `only ${completed} streams completed`);
  // Flat: after warm-up (400 streams) memory grows by less than 32 MiB over the rest of the run.
  assert.ok(rssEnd - rssMid < 32 * 1024, `RSS grew ${rssEnd - rssMid} KiB after warm-up`);
  assert.equal((await server.stop()).code, 0);
});
