/**
 * Guardrails on the requests upstreams send their clients (issue 33): an upstream's
 * elicitation/create or sampling/createMessage carrying a secret reaches the client redacted, and the
 * client's answer reaches the upstream redacted; a block answers the upstream with GUARDRAIL_BLOCKED
 * and the client is never asked. Every way an ask travels, through the official SDK clients:
 *   - a 2025 session (SDK v1) and a per-session 2025 upstream: a server-to-client request;
 *   - a 2026-07-28 client (SDK v2, pinned) and the same upstream: an input_required round the gateway makes;
 *   - a 2026-07-28 client and a 2026-07-28 upstream (examples/modern): the upstream's own round;
 *   - a 2025 session and that 2026-07-28 upstream: its round asked on the session.
 * An interceptor server whose events name elicitation/create (examples/interceptors/word-filter)
 * mutates elicitations and not sampling requests. A virtual server's own list (servers[].interceptors)
 * checks the asks of the clients that came to it, between the upstream's list and the top level's,
 * and not those of clients on the main path.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/jsonrpc/errors.js';
import { ANSWER_CARD, LEAKED_KEY, askingUpstream } from '../support/asking-server.js';
import { exampleConfig, startGateway, toolText, type RunningGateway } from '../support/gateway.js';
import { WORD_FILTER, httpUpstream, startStatelessFixture, type HttpServerProcess } from '../support/http-upstream.js';
import { sample } from '../support/metrics.js';
import { MODERN_VERSION } from '../support/stateless.js';

let fixture: HttpServerProcess;
/** Top level: secrets and pii, redacting, and an interceptor server rewriting elicitations. */
let redacting: RunningGateway;
/** Top level: secrets, blocking. */
let blocking: RunningGateway;
/**
 * secrets and pii on the virtual server /checked only; at each level a word-filter whose replacements
 * chain (Who -> W1 -> W2 -> W3 toward the client, A0 -> A1 -> A2 -> A3 back): what arrives tells the order.
 */
let layered: RunningGateway;

const upstreams = () => [askingUpstream('ask'), httpUpstream('modern', fixture.url)];

beforeAll(async () => {
  fixture = await startStatelessFixture();
  // `strict` blocks secrets in its own asks (upstreams[].interceptors), before the top level redacts them.
  const strict = askingUpstream('strict', { interceptors: [{ name: 'secrets', action: 'block' }] });
  // An interceptor server on elicitations only (word-filter's mutator: "Deploy" becomes "Ship").
  const words = {
    name: 'words',
    server: { command: process.execPath, args: [WORD_FILTER, '--replace', 'Deploy=Ship'] },
    events: ['elicitation/create'],
  };
  redacting = await startGateway(
    exampleConfig({
      upstreams: [...upstreams(), strict],
      interceptors: [{ name: 'secrets' }, { name: 'pii' }, words],
    }),
  );
  blocking = await startGateway(
    exampleConfig({ upstreams: upstreams(), interceptors: [{ name: 'secrets', action: 'block' }] }),
  );
  const wordsAt = (name: string, replace: string) => ({
    name,
    server: { command: process.execPath, args: [WORD_FILTER, '--replace', replace] },
    events: ['elicitation/create'],
  });
  layered = await startGateway(
    exampleConfig({
      upstreams: [
        askingUpstream('ask', { interceptors: [wordsAt('upstream-words', 'Who=W1,A2=A3')] }),
        httpUpstream('modern', fixture.url),
      ],
      interceptors: [wordsAt('top-words', 'W2=W3,A0=A1')],
      servers: [
        {
          path: '/checked',
          tools: ['ask__*', 'modern__*'],
          interceptors: [{ name: 'secrets' }, { name: 'pii' }, wordsAt('endpoint-words', 'W1=W2,A1=A2')],
        },
      ],
    }),
  );
}, 30_000);

afterAll(async () => {
  await redacting?.stop();
  await blocking?.stop();
  await layered?.stop();
  await fixture?.stop();
});

/** What the client was asked: each elicitation's message and each sampling request's text. */
type Asked = string[];

/** The answers every client gives: a card number, which pii redacts on its way to the upstream. */
const ELICITED = { action: 'accept' as const, content: { name: ANSWER_CARD } };
/** An answer whose text only the word-filters change (their mutator leaves `name` fields alone). */
const ELICITED_A0 = { action: 'accept' as const, content: { who: 'A0' } };
type Elicited = typeof ELICITED | typeof ELICITED_A0;
const SAMPLED = {
  role: 'assistant' as const,
  content: { type: 'text' as const, text: `pay with ${ANSWER_CARD}` },
  model: 'm',
};

async function sessionClient(url: URL, asked: Asked, elicited: Elicited = ELICITED): Promise<Client> {
  const client = new Client({ name: 'asks-v1', version: '1' }, { capabilities: { elicitation: {}, sampling: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(String(req.params.message));
    return elicited;
  });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    asked.push(JSON.stringify(req.params.messages));
    return SAMPLED;
  });
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}

async function statelessClient(url: URL, asked: Asked, elicited: Elicited = ELICITED): Promise<ClientV2> {
  const client = new ClientV2(
    { name: 'asks-v2', version: '1' },
    { versionNegotiation: { mode: { pin: MODERN_VERSION } }, capabilities: { elicitation: {}, sampling: {} } },
  );
  client.setRequestHandler('elicitation/create', async (req) => {
    asked.push(String(req.params.message));
    return elicited;
  });
  client.setRequestHandler('sampling/createMessage', async (req) => {
    asked.push(JSON.stringify(req.params.messages));
    return SAMPLED;
  });
  await client.connect(new TransportV2(url));
  return client;
}

interface Caller {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

type Connect = (url: URL, asked: Asked, elicited?: Elicited) => Promise<Caller>;

const CLIENTS: Array<[string, Connect]> = [
  ['a 2025 session (SDK v1)', sessionClient],
  ['a 2026-07-28 client (SDK v2)', statelessClient],
];
const UPSTREAMS: Array<[string, string]> = [
  ['a per-session 2025 upstream', 'ask__ask_secret'],
  ['a 2026-07-28 upstream', 'modern__ask_secret'],
];

describe.each(CLIENTS)('asks to %s', (_who, connect) => {
  describe.each(UPSTREAMS)('from %s', (_from, tool) => {
    it('elicitation/create: the secret in its message is redacted before the client sees it (and the interceptor server rewrites it), the card in the answer before the upstream does', async () => {
      const asked: Asked = [];
      const client = await connect(redacting.url, asked);
      try {
        const result = await client.callTool({ name: tool, arguments: { method: 'elicitation/create' } });
        expect(asked).toEqual(['Ship with [REDACTED:aws-access-key]?']);
        expect(toolText(result)).toBe('answer held the card: no');
      } finally {
        await client.close();
      }
    });

    it('sampling/createMessage: the same both ways (not an event of the interceptor server)', async () => {
      const asked: Asked = [];
      const client = await connect(redacting.url, asked);
      try {
        const result = await client.callTool({ name: tool, arguments: { method: 'sampling/createMessage' } });
        expect(asked).toHaveLength(1);
        expect(asked[0]).toContain('Deploy with [REDACTED:aws-access-key]?');
        expect(asked[0]).not.toContain(LEAKED_KEY);
        expect(toolText(result)).toBe('answer held the card: no');
      } finally {
        await client.close();
      }
    });

    it('a block: the client is never asked, and GUARDRAIL_BLOCKED is the answer', async () => {
      const asked: Asked = [];
      const client = await connect(blocking.url, asked);
      try {
        const outcome = await client.callTool({ name: tool, arguments: { method: 'elicitation/create' } }).then(
          (r) => ({ text: toolText(r) }),
          (err: unknown) => ({ error: err as { code?: number } }),
        );
        expect(asked).toEqual([]);
        if (tool.startsWith('ask__')) {
          // The worker's request was answered with the error, and the upstream said so in its result.
          expect(outcome).toEqual({ text: `error ${ERRORS.GUARDRAIL_BLOCKED.code} GUARDRAIL_BLOCKED` });
        } else {
          // A 2026-07-28 upstream's round: refused whole (its upstream waits for nothing, it asks again on a retry).
          expect(outcome).toMatchObject({ error: { code: ERRORS.GUARDRAIL_BLOCKED.code } });
        }
        expect(JSON.stringify(outcome)).not.toContain(LEAKED_KEY);
      } finally {
        await client.close();
      }
    });
  });
});

describe("an upstream's own list", () => {
  it("sees its asks before the top level's (toward the client): its block wins over the top level's redaction", async () => {
    const asked: Asked = [];
    const client = await sessionClient(redacting.url, asked);
    try {
      const result = await client.callTool({ name: 'strict__ask_secret', arguments: { method: 'elicitation/create' } });
      expect(toolText(result)).toBe(`error ${ERRORS.GUARDRAIL_BLOCKED.code} GUARDRAIL_BLOCKED`);
      expect(asked).toEqual([]);
      // Another upstream's asks are not its business.
      await client.callTool({ name: 'ask__ask_secret', arguments: { method: 'elicitation/create' } });
      expect(asked).toEqual(['Ship with [REDACTED:aws-access-key]?']);
    } finally {
      await client.close();
    }
  });
});

describe.each(CLIENTS)("a virtual server's own list, on the asks to %s", (_who, connect) => {
  const checked = () => new URL('/checked', layered.base);

  describe.each(UPSTREAMS)('from %s', (_from, tool) => {
    it('redacts the secret in an elicitation through the virtual server, and the card in the answer', async () => {
      const asked: Asked = [];
      const client = await connect(checked(), asked);
      try {
        const result = await client.callTool({ name: tool, arguments: { method: 'elicitation/create' } });
        expect(asked).toEqual(['Deploy with [REDACTED:aws-access-key]?']);
        expect(toolText(result)).toBe('answer held the card: no');
      } finally {
        await client.close();
      }
    });

    it('redacts a sampling request through the virtual server too', async () => {
      const asked: Asked = [];
      const client = await connect(checked(), asked);
      try {
        const result = await client.callTool({ name: tool, arguments: { method: 'sampling/createMessage' } });
        expect(asked).toHaveLength(1);
        expect(asked[0]).toContain('Deploy with [REDACTED:aws-access-key]?');
        expect(toolText(result)).toBe('answer held the card: no');
      } finally {
        await client.close();
      }
    });

    it("does not apply on the main path (the only secrets and pii rules are the endpoint's)", async () => {
      const asked: Asked = [];
      const client = await connect(layered.url, asked);
      try {
        const result = await client.callTool({ name: tool, arguments: { method: 'elicitation/create' } });
        expect(asked).toEqual([`Deploy with ${LEAKED_KEY}?`]);
        expect(toolText(result)).toBe('answer held the card: yes');
      } finally {
        await client.close();
      }
    });
  });

  it('runs between the lists: toward the client upstream, endpoint, top level; the answer back the reverse', async () => {
    const asked: Asked = [];
    const client = await connect(checked(), asked, ELICITED_A0);
    try {
      const result = await client.callTool({ name: 'ask__ask_then_work', arguments: {} });
      expect(asked).toEqual(['W3?']);
      expect(toolText(result)).toBe('worked for {"who":"A3"}');
    } finally {
      await client.close();
    }
  });

  it("is left out on the main path: the upstream's and the top level's lists only", async () => {
    const asked: Asked = [];
    const client = await connect(layered.url, asked, ELICITED_A0);
    try {
      const result = await client.callTool({ name: 'ask__ask_then_work', arguments: {} });
      expect(asked).toEqual(['W1?']);
      expect(toolText(result)).toBe('worked for {"who":"A1"}');
    } finally {
      await client.close();
    }
  });
});

describe('verdicts of asks', () => {
  it('are counted and audited under the ask method and phase', async () => {
    const metrics = await (await fetch(new URL('/metrics', redacting.base))).text();
    expect(
      sample(metrics, 'mcpgw_interceptor_verdicts_total', { interceptor: 'secrets', verdict: 'redacted' }),
    ).toBeGreaterThanOrEqual(8);
    expect(
      sample(metrics, 'mcpgw_interceptor_verdicts_total', { interceptor: 'pii', verdict: 'redacted' }),
    ).toBeGreaterThanOrEqual(8);
  });
});
