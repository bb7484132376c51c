/**
 * What replicas say to each other over the bus: every channel by name, every message with its
 * fields named in words, and the one way each is written and read. Both ends of a channel use
 * this file, so a message changes in one place. Replicas of different versions are not meant
 * to share a bus: a field renamed here is renamed on both ends at once.
 *
 * A decoder returns undefined for what is not JSON or names no known message type; it checks
 * only what tells the messages apart (the bus carries only what replicas of this gateway wrote).
 */
import {
  isObject,
  type JsonRpcErrorObject,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcResponse,
} from '../jsonrpc/messages.js';
import type { McpResult } from '../contracts/upstream.js';
import type { ClientInfo } from '../contracts/request-context.js';

// ---- Channels ----------------------------------------------------------------------------

/** One replica's inbox: remote calls on its per-session workers, and what comes back from them. */
export function replicaChannel(replicaId: string): string {
  return `replica:${replicaId}`;
}

/** The live events of one SSE stream of a session, for a replica serving a resumed GET of it. */
export function streamChannel(sessionId: string, streamId: string): string {
  return `stream:{${sessionId}}:${streamId}`;
}

/** What clients POSTed for a legacy HTTP+SSE session, for the replica holding its SSE stream. */
export function legacySseChannel(sessionId: string): string {
  return `legacy-sse:{${sessionId}}`;
}

/** A client's notifications/cancelled that reached a replica not holding the request: every replica hears it. */
export const CANCEL_CHANNEL = 'cancel';

/** A session record changed or went: every replica drops its cached copy. */
export const SESSION_CHANGES_CHANNEL = 'session-changes';

/** A per-session worker's list changed: every replica does what the one that heard it does. */
export const LIST_CHANGES_CHANNEL = 'list-changes';

/** A client answered a request of the gateway's on a replica that did not send it to the client: it may be a task's. */
export const TASK_ANSWERS_CHANNEL = 'task-answers';

// ---- Remote calls (replicaChannel) ---------------------------------------------------------

/** The origin replica asks the owner of a scope's worker to run a call there. */
export interface RemoteCallRequest {
  type: 'call';
  /** `<origin replica id>:<n>`: names the call in every later message about it. */
  callId: string;
  /** The replica holding the client's connection: where everything about the call goes back. */
  originReplica: string;
  scope: string;
  upstream: string;
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  clientInfo: ClientInfo | undefined;
  principal?: string;
  /** The virtual server's path the client came to (its interceptors check the worker's asks); none: the main one. */
  endpoint?: string;
  method: string;
  params: Record<string, unknown> | undefined;
  /** The origin listens for progress notifications of this call. */
  wantsProgress: boolean;
  /** A stateless retry: it continues its input-required chain's call (see PerSessionCallOptions). */
  continuation: boolean;
}

export type RemoteCallMessage =
  | RemoteCallRequest
  /** Origin → owner: the client (or a deadline) cancelled the call. */
  | { type: 'cancel'; callId: string; reason: string }
  /** Owner → origin: the call runs here now (without it, the origin takes the owner for dead). */
  | { type: 'acknowledged'; callId: string }
  /** Owner → origin: something the worker sent during the call (progress, a request to the client). */
  | { type: 'message'; callId: string; message: JsonRpcMessage }
  /** Owner → origin: something the worker sent for the session, not for one call (its GET stream). */
  | { type: 'session-message'; scope: string; message: JsonRpcMessage }
  /** Owner → origin: the call's outcome, a result or an error. */
  | { type: 'done'; callId: string; result?: McpResult; error?: JsonRpcErrorObject }
  /** Any replica → the one whose worker asked: the client's answer to that request. */
  | { type: 'answer'; scope: string; response: JsonRpcResponse }
  /** Origin → owner: the session ended, its worker stops. */
  | { type: 'release'; scope: string };

const REMOTE_CALL_TYPES: ReadonlySet<string> = new Set<RemoteCallMessage['type']>([
  'call',
  'cancel',
  'acknowledged',
  'message',
  'session-message',
  'done',
  'answer',
  'release',
]);

export function encodeRemoteCall(message: RemoteCallMessage): string {
  return JSON.stringify(message);
}

export function decodeRemoteCall(raw: string): RemoteCallMessage | undefined {
  return ofType(raw, REMOTE_CALL_TYPES) as RemoteCallMessage | undefined;
}

// ---- Stream followers (streamChannel) ------------------------------------------------------

/** What travels on a stream's channel; `Event` is the event store's recorded event. */
export type StreamMessage<Event> =
  /** A recorded event: the follower writes it under its id. */
  | { type: 'event'; event: Event }
  /** A message whose append failed: written without an id (it cannot be resumed). */
  | { type: 'unrecorded'; message: JsonRpcMessage }
  /** A replica took the session's GET stream: every other holder ends its own. */
  | { type: 'holder'; holderToken: string };

const STREAM_TYPES: ReadonlySet<string> = new Set<StreamMessage<unknown>['type']>(['event', 'unrecorded', 'holder']);

export function encodeStreamMessage<Event>(message: StreamMessage<Event>): string {
  return JSON.stringify(message);
}

export function decodeStreamMessage<Event>(raw: string): StreamMessage<Event> | undefined {
  return ofType(raw, STREAM_TYPES) as StreamMessage<Event> | undefined;
}

// ---- Legacy HTTP+SSE posts (legacySseChannel) ---------------------------------------------

/**
 * One POST body a replica accepted (checked for size, depth and JSON already) for a session
 * whose SSE stream another replica holds: that replica runs its messages and writes the replies.
 */
export interface LegacySsePost {
  type: 'post';
  body: string;
}

const LEGACY_SSE_TYPES: ReadonlySet<string> = new Set<LegacySsePost['type']>(['post']);

export function encodeLegacySsePost(post: LegacySsePost): string {
  return JSON.stringify(post);
}

export function decodeLegacySsePost(raw: string): LegacySsePost | undefined {
  const value = ofType(raw, LEGACY_SSE_TYPES) as { body?: unknown } | undefined;
  return value && typeof value.body === 'string' ? (value as LegacySsePost) : undefined;
}

// ---- Cancellations (CANCEL_CHANNEL) --------------------------------------------------------

/** A client's notifications/cancelled for a request some replica may hold. */
export interface RemoteCancel {
  scope: string;
  requestId: JsonRpcId;
  /** The error message the cancelled request fails with. */
  message?: string;
}

export function encodeRemoteCancel(cancel: RemoteCancel): string {
  return JSON.stringify(cancel);
}

export function decodeRemoteCancel(raw: string): RemoteCancel | undefined {
  const value = parse(raw);
  if (!isObject(value) || typeof value.scope !== 'string') return undefined;
  if (typeof value.requestId !== 'string' && typeof value.requestId !== 'number') return undefined;
  if (value.message !== undefined && typeof value.message !== 'string') return undefined;
  return value as unknown as RemoteCancel;
}

// ---- Session changes (SESSION_CHANGES_CHANNEL) ---------------------------------------------

export interface SessionChange {
  sessionId: string;
}

export function encodeSessionChange(change: SessionChange): string {
  return JSON.stringify(change);
}

export function decodeSessionChange(raw: string): SessionChange | undefined {
  const value = parse(raw);
  return isObject(value) && typeof value.sessionId === 'string' ? { sessionId: value.sessionId } : undefined;
}

// ---- List changes (LIST_CHANGES_CHANNEL) ----------------------------------------------------

/** A per-session worker of `upstream` for `scope` sent `method` (a list_changed), heard by `replica`. */
export interface ListChange {
  replica: string;
  upstream: string;
  scope: string;
  method: string;
}

export function encodeListChange(change: ListChange): string {
  return JSON.stringify(change);
}

export function decodeListChange(raw: string): ListChange | undefined {
  const value = parse(raw);
  if (!isObject(value)) return undefined;
  const { replica, upstream, scope, method } = value;
  const strings = [replica, upstream, scope, method].every((v) => typeof v === 'string');
  return strings ? ({ replica, upstream, scope, method } as ListChange) : undefined;
}

// ---- Task answers (TASK_ANSWERS_CHANNEL) ---------------------------------------------------

/** The client of `scope` answered request `id` on `replica`. */
export interface TaskAnswer {
  replica: string;
  scope: string;
  id: string;
}

export function encodeTaskAnswer(answer: TaskAnswer): string {
  return JSON.stringify(answer);
}

export function decodeTaskAnswer(raw: string): TaskAnswer | undefined {
  const value = parse(raw);
  if (!isObject(value)) return undefined;
  const { replica, scope, id } = value;
  const strings = [replica, scope, id].every((v) => typeof v === 'string');
  return strings ? ({ replica, scope, id } as TaskAnswer) : undefined;
}

/** The message in `raw` when its `type` is one of `types`. */
function ofType(raw: string, types: ReadonlySet<string>): unknown {
  const value = parse(raw);
  return isObject(value) && typeof value.type === 'string' && types.has(value.type) ? value : undefined;
}

function parse(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}
