import type { Logger } from 'pino';
import { GatewayError, UpstreamRpcError, toErrorObject } from '../jsonrpc/errors.js';
import type { JsonRpcNotification, JsonRpcResponse } from '../jsonrpc/messages.js';
import type { Bus } from './bus.js';
import {
  decodeRemoteCall,
  encodeRemoteCall,
  replicaChannel,
  type RemoteCallMessage,
  type RemoteCallRequest,
} from './bus-messages.js';
import type { OwnerRegistry } from './owner-registry.js';
import type { CallOptions, McpResult, PerSessionCallOptions, UpstreamCall } from '../contracts/upstream.js';
import type { MessageSink, RequestContext } from '../contracts/request-context.js';

/** The owner did not acknowledge a call: it never started there, so another replica may run it. */
export class OwnerUnreachable extends Error {
  constructor(readonly owner: string) {
    super(`Replica ${owner} did not answer`);
    this.name = 'OwnerUnreachable';
  }
}

/** What the owner side needs from the virtual server. */
export interface LocalExecutor {
  /** Runs a call on this replica's own worker for the scope (the per-session path). */
  runLocal(
    ctx: RequestContext,
    upstream: string,
    method: string,
    params: Record<string, unknown> | undefined,
    options?: PerSessionCallOptions,
  ): UpstreamCall;
  /** A client's answer to a request this replica's worker sent it. */
  receiveAnswer(scope: string, response: JsonRpcResponse): void;
  releaseLocal(scope: string): void;
}

interface Outgoing {
  owner: string;
  ctx: RequestContext;
  options: CallOptions | undefined;
  resolve: (r: McpResult) => void;
  reject: (e: Error) => void;
  ackTimer: NodeJS.Timeout;
  aliveTimer: NodeJS.Timeout | undefined;
}

export interface RemoteCallsOptions {
  /** No acknowledgement within this time: the owner is taken for dead. */
  ackTimeoutMs?: number;
  /** How often a replica waiting on another checks that it is still alive. */
  livenessIntervalMs?: number;
}

/**
 * Forwards calls on per-session workers to the replica that owns the worker, and runs the
 * calls other replicas forward here. Everything the worker sends back (progress, requests to
 * the client, the result) returns to the replica holding the client's connection.
 */
export class RemoteCalls {
  #next = 1;
  readonly #outgoing = new Map<string, Outgoing>();
  readonly #incoming = new Map<string, UpstreamCall>();
  /** The session stream of each scope that forwarded calls from here, for the owner's messages. */
  readonly #sessionSinks = new Map<string, MessageSink>();
  #unsubscribe: (() => Promise<void>) | undefined;
  readonly #ackTimeoutMs: number;
  readonly #livenessMs: number;

  constructor(
    private readonly bus: Bus,
    private readonly owners: OwnerRegistry,
    private readonly executor: LocalExecutor,
    private readonly log: Logger,
    options: RemoteCallsOptions = {},
  ) {
    this.#ackTimeoutMs = options.ackTimeoutMs ?? 1500;
    this.#livenessMs = options.livenessIntervalMs ?? 1000;
  }

  get replicaId(): string {
    return this.bus.replicaId;
  }

  async start(): Promise<void> {
    this.#unsubscribe = await this.bus.subscribe(replicaChannel(this.bus.replicaId), (raw) => this.#onMessage(raw));
  }

  async close(): Promise<void> {
    await this.#unsubscribe?.();
    for (const call of this.#incoming.values()) call.cancel(new GatewayError('SHUTTING_DOWN'));
    for (const out of this.#outgoing.values()) this.#settle(out, undefined, new GatewayError('SHUTTING_DOWN'));
    this.#outgoing.clear();
  }

  /** Origin side: runs the call on `owner`'s worker for the scope. */
  call(
    owner: string,
    ctx: RequestContext,
    upstream: string,
    method: string,
    params: Record<string, unknown> | undefined,
    options?: PerSessionCallOptions,
  ): UpstreamCall {
    const id = `${this.bus.replicaId}:${this.#next++}`;
    if (ctx.sessionSink) this.#sessionSinks.set(ctx.scope, ctx.sessionSink);
    const promise = new Promise<McpResult>((resolve, reject) => {
      const out: Outgoing = {
        owner,
        ctx,
        options,
        resolve,
        reject,
        aliveTimer: undefined,
        ackTimer: setTimeout(() => {
          this.#outgoing.delete(id);
          reject(new OwnerUnreachable(owner));
        }, this.#ackTimeoutMs),
      };
      this.#outgoing.set(id, out);
      this.#send(owner, {
        type: 'call',
        callId: id,
        originReplica: this.bus.replicaId,
        scope: ctx.scope,
        upstream,
        protocolVersion: ctx.protocolVersion,
        clientCapabilities: { ...ctx.clientCapabilities },
        clientInfo: ctx.clientInfo,
        ...(ctx.principal !== undefined ? { principal: ctx.principal } : {}),
        ...(ctx.endpoint !== undefined ? { endpoint: ctx.endpoint } : {}),
        method,
        params,
        wantsProgress: options?.onNotification !== undefined,
        continuation: options?.continuation === true,
      });
    });
    return {
      promise,
      cancel: (error: Error) => {
        const out = this.#outgoing.get(id);
        if (!out) return;
        this.#outgoing.delete(id);
        this.#send(out.owner, { type: 'cancel', callId: id, reason: error.message });
        this.#settle(out, undefined, error);
      },
    };
  }

  /** A client's answer that belongs to a request another replica's worker sent. */
  forwardAnswer(replicaId: string, scope: string, response: JsonRpcResponse): void {
    this.#send(replicaId, { type: 'answer', scope, response });
  }

  /** A session ended here: its worker on `owner` stops too. */
  releaseRemote(owner: string, scope: string): void {
    this.#sessionSinks.delete(scope);
    this.#send(owner, { type: 'release', scope });
  }

  forgetScope(scope: string): void {
    this.#sessionSinks.delete(scope);
  }

  #send(replicaId: string, msg: RemoteCallMessage): void {
    this.bus.publish(replicaChannel(replicaId), encodeRemoteCall(msg)).catch((err: unknown) => {
      this.log.warn({ err: (err as Error).message, to: replicaId, type: msg.type }, 'bus publish failed');
      if (msg.type === 'call' || msg.type === 'cancel') {
        const out = this.#outgoing.get(msg.callId);
        if (out) {
          this.#outgoing.delete(msg.callId);
          this.#settle(
            out,
            undefined,
            new GatewayError('UPSTREAM_UNAVAILABLE', "Cannot reach the replica that runs this session's worker"),
          );
        }
      }
    });
  }

  #settle(out: Outgoing, result: McpResult | undefined, error?: Error): void {
    clearTimeout(out.ackTimer);
    clearInterval(out.aliveTimer);
    if (error) out.reject(error);
    else out.resolve(result ?? {});
  }

  #onMessage(raw: string): void {
    const msg = decodeRemoteCall(raw);
    if (!msg) {
      this.log.warn('unreadable bus message');
      return;
    }
    switch (msg.type) {
      case 'call':
        this.#runForwarded(msg);
        return;
      case 'cancel':
        this.#incoming.get(msg.callId)?.cancel(new GatewayError('REQUEST_CANCELLED', msg.reason));
        return;
      case 'acknowledged': {
        const out = this.#outgoing.get(msg.callId);
        if (!out) return;
        clearTimeout(out.ackTimer);
        // From now on the call runs there: if that replica dies, the call fails (never hangs).
        out.aliveTimer = setInterval(() => {
          this.owners.isAlive(out.owner).then(
            (alive) => {
              if (alive || this.#outgoing.get(msg.callId) !== out) return;
              this.#outgoing.delete(msg.callId);
              this.#settle(
                out,
                undefined,
                new GatewayError('UPSTREAM_UNAVAILABLE', "The replica running this session's worker stopped"),
              );
            },
            () => undefined,
          );
        }, this.#livenessMs);
        return;
      }
      case 'message': {
        const out = this.#outgoing.get(msg.callId);
        if (!out) return;
        const m = msg.message;
        if ('method' in m && m.method === 'notifications/progress' && !('id' in m) && out.options?.onNotification) {
          out.options.onNotification(m as JsonRpcNotification);
        } else if (!out.ctx.sink.send(m)) {
          out.ctx.sessionSink?.send(m);
        }
        return;
      }
      case 'session-message':
        this.#sessionSinks.get(msg.scope)?.send(msg.message);
        return;
      case 'done': {
        const out = this.#outgoing.get(msg.callId);
        if (!out) return;
        this.#outgoing.delete(msg.callId);
        if (msg.error) this.#settle(out, undefined, new UpstreamRpcError(msg.error));
        else this.#settle(out, msg.result);
        return;
      }
      case 'answer':
        this.executor.receiveAnswer(msg.scope, msg.response);
        return;
      case 'release':
        this.executor.releaseLocal(msg.scope);
        return;
    }
  }

  /** Owner side: runs a forwarded call on this replica's worker, streaming back what it sends. */
  #runForwarded(msg: RemoteCallRequest): void {
    const origin = msg.originReplica;
    this.#send(origin, { type: 'acknowledged', callId: msg.callId });
    const sink: MessageSink = {
      send: (message) => {
        this.#send(origin, { type: 'message', callId: msg.callId, message });
        return true;
      },
    };
    const ctx: RequestContext = {
      protocolVersion: msg.protocolVersion,
      clientCapabilities: msg.clientCapabilities,
      clientInfo: msg.clientInfo,
      principal: msg.principal,
      stateless: false,
      scope: msg.scope,
      endpoint: msg.endpoint,
      sink,
      sessionSink: {
        send: (message) => {
          this.#send(origin, { type: 'session-message', scope: msg.scope, message });
          return true;
        },
      },
    };
    const onNotification = msg.wantsProgress ? (n: JsonRpcNotification) => sink.send(n) : undefined;
    const options = onNotification || msg.continuation ? { onNotification, continuation: msg.continuation } : undefined;
    const call = this.executor.runLocal(ctx, msg.upstream, msg.method, msg.params, options);
    this.#incoming.set(msg.callId, call);
    call.promise
      .then(
        (result) => this.#send(origin, { type: 'done', callId: msg.callId, result }),
        (err: unknown) => this.#send(origin, { type: 'done', callId: msg.callId, error: toErrorObject(err) }),
      )
      .finally(() => this.#incoming.delete(msg.callId));
  }
}
