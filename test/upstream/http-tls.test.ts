/**
 * Remote upstreams over TLS with a private CA and a client certificate (mTLS): certificates made
 * by openssl for this run, an HTTPS MCP server on loopback that requires the gateway's client
 * certificate, and the failures a wrong setup must show (untrusted server, no client
 * certificate) without breaking the rest of the gateway.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ECHO_SERVER,
  exampleConfig,
  openSession,
  post,
  startGateway,
  stdioUpstream,
  type RunningGateway,
} from '../support/gateway.js';
import { makeCertificates, type TestCertificates } from '../support/certificates.js';
import { httpUpstream } from '../support/http-upstream.js';
import { oneToolHandler } from '../support/one-tool-server.js';
import { until } from '../support/wait.js';

let certs: TestCertificates;
let server: Server;
let url: string;
const clientNames: string[] = [];

/** A minimal MCP server over HTTPS that requires a client certificate signed by the CA. */
function startHttpsUpstream(): Promise<void> {
  server = createServer(
    {
      key: readFileSync(file('server.key')),
      cert: readFileSync(file('server.pem')),
      ca: readFileSync(file('ca.pem')),
      requestCert: true,
      rejectUnauthorized: true,
    },
    oneToolHandler('secure', 'over mTLS', (req) =>
      clientNames.push(String((req.socket as TLSSocket).getPeerCertificate().subject?.CN)),
    ),
  );
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r()));
}

beforeAll(async () => {
  certs = makeCertificates();
  await startHttpsUpstream();
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  await new Promise((r) => server?.close(r));
  certs?.remove();
});

const file = (name: string) => certs.file(name);
const callSecure = async (gw: RunningGateway) => {
  const sid = await openSession(gw.url);
  return post(
    gw.url,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'remote__secure', arguments: {} } },
    { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
  );
};

describe('remote upstreams over TLS', () => {
  it('private CA and client certificate: calls go through, and the upstream saw the gateway certificate', async () => {
    const gw = await startGateway(
      exampleConfig({
        upstreams: [
          httpUpstream('remote', url, {
            tls: { caFile: file('ca.pem'), certFile: file('client.pem'), keyFile: file('client.key') },
          }),
        ],
      }),
    );
    try {
      const r = await callSecure(gw);
      expect(r.json.result.content[0].text).toBe('over mTLS');
      expect(clientNames.length).toBeGreaterThan(0);
      expect(new Set(clientNames)).toEqual(new Set(['mcp-gateway']));
    } finally {
      await gw.stop();
    }
  });

  for (const [name, tls, reason] of [
    [
      'a server certificate from a CA the gateway does not trust',
      { certFile: 'client.pem', keyFile: 'client.key' },
      /TLS handshake failed \(SELF_SIGNED_CERT_IN_CHAIN/,
    ],
    // With TLS 1.3 the server refuses a missing client certificate after the handshake: the client sees it close.
    [
      'no client certificate for an upstream that requires one',
      { caFile: 'ca.pem' },
      /other side closed|TLS handshake failed/,
    ],
  ] as const) {
    it(`${name}: the upstream is down with the reason, and the rest of the gateway works`, async () => {
      const files = Object.fromEntries(Object.entries(tls).map(([k, v]) => [k, file(v)]));
      const gw = await startGateway(
        exampleConfig({
          upstreams: [
            httpUpstream('remote', url, { tls: files, retry: { attempts: 0 } }),
            stdioUpstream('echo', ECHO_SERVER),
          ],
        }),
      );
      try {
        let ready: any;
        await until('the remote upstream to be reported down', async () => {
          ready = await fetch(new URL('/readyz', gw.base)).then((res) => res.json());
          return ready.upstreams.remote.state === 'down';
        });
        expect(ready.upstreams.remote.lastError).toMatch(reason);
        const sid = await openSession(gw.url);
        const echo = await post(
          gw.url,
          {
            jsonrpc: '2.0',
            id: 2,
            method: 'tools/call',
            params: { name: 'echo__echo', arguments: { text: 'still here' } },
          },
          { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
        );
        expect(echo.json.result.content[0].text).toBe('still here');
      } finally {
        await gw.stop();
      }
    });
  }

  it('config: a key without its certificate, an unreadable file, tls on an http URL are start-up errors naming the key', () => {
    expect(() =>
      exampleConfig({ upstreams: [httpUpstream('remote', url, { tls: { keyFile: file('client.key') } })] }),
    ).toThrow(/upstreams\[0\]\.tls: certFile and keyFile go together/);
    expect(() =>
      exampleConfig({ upstreams: [httpUpstream('remote', url, { tls: { caFile: file('missing.pem') } })] }),
    ).toThrow(/upstreams\[0\]\.tls\.caFile: cannot read/);
    expect(() =>
      exampleConfig({
        upstreams: [httpUpstream('remote', 'http://127.0.0.1:1/mcp', { tls: { caFile: file('ca.pem') } })],
      }),
    ).toThrow(/tls: applies to https URLs only/);
  });
});
