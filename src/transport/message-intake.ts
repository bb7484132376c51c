import { GatewayError } from '../jsonrpc/errors.js';
import { exceedsDepth } from '../jsonrpc/json-depth.js';
import { classify, type Classified } from '../jsonrpc/messages.js';

export interface IntakeLimits {
  /** Deepest nesting of objects and arrays a body may have. */
  maxDepth: number;
  /** Most messages one batch may hold. */
  maxBatch: number;
}

export interface Intake {
  batch: boolean;
  messages: Classified[];
}

/**
 * A POST body as JSON-RPC messages, or the door's refusal: not JSON, nested deeper than any MCP
 * message needs (a shape that makes recursive consumers overflow their stack), an empty batch, or
 * a batch larger than the limit. Size is bounded before this, by the body limit.
 */
export function readMessages(text: string, limits: IntakeLimits): Intake {
  if (exceedsDepth(text, limits.maxDepth)) {
    throw new GatewayError(
      'INVALID_REQUEST',
      `Invalid Request: the message nests deeper than limits.maxJsonDepth (${limits.maxDepth})`,
    );
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new GatewayError('PARSE_ERROR', 'Parse error: body is not valid JSON');
  }
  const batch = Array.isArray(body);
  const items: unknown[] = batch ? (body as unknown[]) : [body];
  if (items.length === 0) throw new GatewayError('INVALID_REQUEST', 'Invalid Request: empty batch');
  if (items.length > limits.maxBatch) {
    throw new GatewayError(
      'INVALID_REQUEST',
      `Invalid Request: a batch of ${items.length} messages is more than limits.maxBatchSize (${limits.maxBatch})`,
    );
  }
  return { batch, messages: items.map(classify) };
}

/** What a POST carries, for the access log: `batch`, or its one message's kind and method. */
export function describeIntake({ batch, messages }: Intake): { type: string; method: string | undefined } {
  const first = messages[0];
  if (batch || !first) return { type: batch ? 'batch' : 'empty', method: undefined };
  return {
    type: first.kind,
    method: first.kind === 'request' || first.kind === 'notification' ? first.message.method : undefined,
  };
}
