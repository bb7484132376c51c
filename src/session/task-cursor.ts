/** tasks/list cursors: an offset into a binding's tasks, opaque to clients. */
export function encodeCursor(offset: number): string {
  return Buffer.from(`t:${offset}`).toString('base64url');
}

/** The offset a cursor names; undefined when it is not one of ours. */
export function decodeCursor(cursor: string): number | undefined {
  const m = /^t:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return m ? Number(m[1]) : undefined;
}
