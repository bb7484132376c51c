// scripts/rr-proxy.mjs, the round-robin proxy scripts/conformance.sh puts in front of gateway
// replicas (CONFORMANCE_REPLICAS): each request goes to the next target in turn, bodies and
// streamed (SSE) replies pass through as they come, and it stops on SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const PROXY = resolve(import.meta.dirname, '../../scripts/rr-proxy.mjs');

const started: Array<Server | ChildProcess> = [];

afterEach(async () => {
  for (const s of started.splice(0)) {
    if ('kill' in s) {
      if (s.exitCode === null && s.signalCode === null) {
        s.kill('SIGKILL');
        await once(s, 'exit');
      }
    } else {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  }
});

/** A target that answers with its name and the body it got; /stream sends two SSE events 1 s apart. */
async function target(label: string): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.url === '/stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: first from ${label}\n\n`);
        setTimeout(() => res.end(`data: second from ${label}\n\n`), 1000);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'x-target': label });
      res.end(JSON.stringify({ target: label, method: req.method, body, host: req.headers.host }));
    });
  });
  started.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function proxy(targets: string[]): Promise<{ url: string; proc: ChildProcess; stderr: () => string }> {
  const proc = spawn(process.execPath, [PROXY, '--port', '0', ...targets], { stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(proc);
  let out = '';
  let err = '';
  proc.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const url = await new Promise<string>((ok, fail) => {
    proc.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /rr-proxy: (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) ok(m[1]!);
    });
    proc.once('exit', (code) => fail(new Error(`rr-proxy exited with ${code}: ${err}`)));
  });
  return { url, proc, stderr: () => err };
}

describe('rr-proxy (conformance replicas)', () => {
  it('sends each request to the next target in turn, with its method, body and the target as Host', async () => {
    const a = await target('a');
    const b = await target('b');
    const p = await proxy([a, b]);
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${p.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `{"n":${i}}`,
      });
      expect(res.status).toBe(200);
      const got = (await res.json()) as { target: string; method: string; body: string; host: string };
      expect(got.method).toBe('POST');
      expect(got.body).toBe(`{"n":${i}}`);
      expect(got.host).toBe(new URL(got.target === 'a' ? a : b).host);
      seen.push(got.target);
    }
    expect(seen).toEqual(['a', 'b', 'a', 'b', 'a']);
    p.proc.kill('SIGTERM');
    await once(p.proc, 'exit');
    expect(p.stderr()).toMatch(/requests per target: \S+=3 \S+=2/);
  });

  it('passes a streamed reply through event by event, not at its end', async () => {
    const p = await proxy([await target('s')]);
    const res = await fetch(`${p.url}/stream`);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.getReader();
    const t0 = Date.now();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('first from s');
    // The second event comes 1 s later: the first arrived before the reply ended.
    expect(Date.now() - t0).toBeLessThan(700);
    let rest = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).toContain('second from s');
  });

  it('answers 502 when a target is down, and refuses non-loopback targets', async () => {
    const down = await target('gone');
    const server = started.pop() as Server;
    await new Promise((r) => server.close(r));
    const p = await proxy([down]);
    const res = await fetch(`${p.url}/mcp`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(502);
    await res.arrayBuffer();

    const refused = spawn(process.execPath, [PROXY, 'http://192.0.2.1:80'], { stdio: 'ignore' });
    started.push(refused);
    const [code] = (await once(refused, 'exit')) as [number];
    expect(code).toBe(2);
  });
});
