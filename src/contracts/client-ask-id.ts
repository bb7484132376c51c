// The ids the gateway gives the requests it relays to clients (client asks): the replica that
// sent one is in its id, so an answer that reaches another replica finds its way back. Here, not
// in gateway/client-asks.ts, because tasks/ (below gateway/) reads them too.

export function clientAskId(replicaId: string, n: number): string {
  return `mcpgw.${replicaId}.${n}`;
}

/** The replica that sent the request with this id, if the id is one of the gateway's. */
export function replicaOfClientAsk(id: string): string | undefined {
  const m = /^mcpgw\.([^.]+)\.\d+$/.exec(id);
  return m?.[1];
}
