/**
 * ResponseBody, the one reader of an upstream HTTP response's body, over undici's dispatch API
 * against a real server on loopback: a body that came whole before anyone read it (the usual
 * small JSON reply), one that comes in pieces while it is read, the size bound on both, and one
 * read only.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseBody } from '../../src/upstream/wires/response-body.js';

const WHOLE = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { text: 'x'.repeat(100) } });

let server: Server;
let pool: Pool;

beforeAll(async () => {
  server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/whole') return void res.end(WHOLE);
    // In pieces, 30 ms apart: the reader is waiting when they come.
    res.write('{"jsonrpc":"2.0",');
    setTimeout(() => res.write('"id":1,'), 30);
    setTimeout(() => res.end('"result":{}}'), 60);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

afterAll(async () => {
  await pool.close();
  await new Promise((resolve) => server.close(resolve));
});

/** A response's body as the gateway's dispatch handler hands it over. */
function bodyOf(path: string): Promise<ResponseBody> {
  return new Promise((resolve, reject) => {
    let body: ResponseBody | undefined;
    pool.dispatch(
      { method: 'GET', path },
      {
        onRequestStart() {},
        onResponseStart(controller) {
          body = new ResponseBody(controller);
          resolve(body);
        },
        onResponseData(_controller, chunk) {
          body?.push(chunk);
        },
        onResponseEnd() {
          body?.end();
        },
        onResponseError(_controller, err) {
          if (body) body.fail(err);
          else reject(err);
        },
      },
    );
  });
}

/** Until the body has ended by itself, unread. */
async function ended(body: ResponseBody): Promise<void> {
  for (let i = 0; i < 100 && !body.destroyed; i++) await new Promise((r) => setTimeout(r, 5));
  expect(body.destroyed).toBe(true);
}

describe('ResponseBody', () => {
  it('reads a body that came whole before the read, once', async () => {
    const body = await bodyOf('/whole');
    await ended(body);
    let chunks = 0;
    expect(await body.text(undefined, () => chunks++)).toBe(WHOLE);
    expect(chunks).toBeGreaterThan(0);
    await expect(body.text()).rejects.toThrow('already read');
  });

  it('reads a body that comes in pieces while it is read', async () => {
    const body = await bodyOf('/pieces');
    expect(body.destroyed).toBe(false);
    let chunks = 0;
    expect(await body.text(undefined, () => chunks++)).toBe('{"jsonrpc":"2.0","id":1,"result":{}}');
    expect(chunks).toBeGreaterThanOrEqual(2);
  });

  it('refuses a whole body over the limit', async () => {
    const body = await bodyOf('/whole');
    await ended(body);
    await expect(body.text(100)).rejects.toThrow('answer larger than 100 bytes');
    await expect(body.text()).rejects.toThrow('already read');
  });

  it('refuses a body in pieces once it passes the limit, and stops it', async () => {
    const body = await bodyOf('/pieces');
    await expect(body.text(20)).rejects.toThrow('answer larger than 20 bytes');
    expect(body.destroyed).toBe(true);
  });
});
