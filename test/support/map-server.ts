/**
 * The official MCP Apps example @modelcontextprotocol/server-map (a CesiumJS globe: one UI tool,
 * `show-map`, whose `_meta` names `ui://cesium-map/mcp-app.html`) as a stdio upstream, a real
 * child process. It makes no network call of its own unless its `geocode` tool is called (the
 * globe's tiles load in a browser host only), so the tests never call that tool.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { stdioUpstream } from './gateway.js';

const require = createRequire(import.meta.url);
const DIST = dirname(require.resolve('@modelcontextprotocol/server-map'));
/** Its bin (`mcp-map-server`), which serves stdio when given `--stdio`. */
export const MAP_SERVER = join(DIST, 'index.js');
export const MAP_UI_URI = 'ui://cesium-map/mcp-app.html';

export function mapUpstream(
  name: string,
  extra: Record<string, unknown> = {},
  entry = MAP_SERVER,
): Record<string, unknown> {
  return stdioUpstream(name, entry, { args: [entry, '--stdio'], ...extra });
}

/**
 * A copy of server-map's dist whose app HTML carries `marker`, so a read shows which copy
 * answered (the server reads its HTML from beside its own script). Returns the copy's entry;
 * removeMarkedCopies() deletes every copy made.
 */
export function markedMapServer(marker: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'server-map-'));
  copies.push(dir);
  cpSync(DIST, dir, { recursive: true });
  const html = join(dir, 'mcp-app.html');
  writeFileSync(html, readFileSync(html, 'utf8').replace('<head>', `<head><!-- ${marker} -->`));
  return join(dir, 'index.js');
}

const copies: string[] = [];

export function removeMarkedCopies(): void {
  for (const dir of copies.splice(0)) rmSync(dir, { recursive: true, force: true });
}
