/**
 * What the transport needs to know of a request's sender: the server's authenticator (see
 * server/auth/) checks the token, and the transport only asks these questions of it.
 */
import type { Caller } from './request-context.js';

/** Who a request comes from (the token's issuer and subject), and what its token allows. */
export interface Identity {
  principal: string;
  scopes: ReadonlySet<string>;
  /** The claims and the validated token, for upstreams that act for users (token exchange, claim headers). */
  caller?: Caller;
}

export interface Authenticator {
  /** Who sent a request, from its `Authorization` header; throws an AuthChallenge when that does not hold. */
  authenticate(authorization: string | undefined): Promise<Identity>;
  /** Throws an AuthChallenge (403) when the identity lacks a scope `auth.toolScopes` asks for this tool. */
  authorizeTool(identity: Identity, tool: string): void;
  /** Whether the identity may call a tool, for lists; undefined when no tool has scopes of its own. */
  toolPolicy(identity: Identity): ((tool: string) => boolean) | undefined;
}
