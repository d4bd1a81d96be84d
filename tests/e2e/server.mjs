// Starts `hadron serve` on a free port for a test file and stops it with SIGTERM.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

export const HADRON = process.env.HADRON_BIN ?? new URL('../../build/hadron', import.meta.url).pathname;

export async function startServer(extraArgs = []) {
  const args = ['serve', '--port', '0', '--device', 'cpu', '--host', '127.0.0.1', ...extraArgs];
  const child = spawn(HADRON, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  const port = await new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      log += chunk;
      const m = log.match(/listening on http:\/\/[^:]+:(\d+)/);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`hadron serve exited ${code}:\n${log}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {  // until the model is loaded
    const r = await fetch(`${url}/health`).catch(() => null);
    if (r?.status === 200) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    url, child, log: () => log,
    rssKiB: () => Number(readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]),
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

export async function metric(url, name) {
  const text = await (await fetch(`${url}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) if (line.startsWith(name)) total += Number(line.split(' ').pop());
  return total;
}

// The metric once it equals `want`, or its value after `ms` milliseconds of polling: for state
// the engine loop updates between steps, after the HTTP side has already answered.
export async function settledMetric(url, name, want, ms = 5000) {
  const deadline = Date.now() + ms;
  let value = await metric(url, name);
  while (value !== want && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    value = await metric(url, name);
  }
  return value;
}

export async function post(url, path, body, headers = {}) {
  const r = await fetch(`${url}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: r.status, json, text };
}
