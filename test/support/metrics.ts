/** Reading a gateway's /metrics (Prometheus text exposition) in tests. */

/** The value of one series, its labels given exactly (all of them); 0 when absent. */
export function sample(text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const pairs = line.slice(name.length + 1, line.indexOf('}')).split(',');
    if (pairs.length === wanted.length && wanted.every((p) => pairs.includes(p)))
      return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}
