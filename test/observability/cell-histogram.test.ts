import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CellHistogram } from '../../src/observability/cell-histogram.js';

const LABELS = ['a', 'b', 'c'] as const;
const BUCKETS = [0.001, 0.01, 0.1, 1, 10];

function pair(): {
  ours: CellHistogram<'a' | 'b' | 'c'>;
  theirs: Histogram<'a' | 'b' | 'c'>;
  oursReg: Registry;
  theirsReg: Registry;
} {
  const oursReg = new Registry();
  const theirsReg = new Registry();
  const ours = new CellHistogram('x_seconds', 'help text', LABELS, BUCKETS, oursReg);
  const theirs = new Histogram({
    name: 'x_seconds',
    help: 'help text',
    labelNames: LABELS,
    buckets: BUCKETS,
    registers: [theirsReg],
  });
  return { ours, theirs, oursReg, theirsReg };
}

describe('CellHistogram', () => {
  it("scrapes as prom-client's Histogram does, in text and JSON, for the same observations", async () => {
    const { ours, theirs, oursReg, theirsReg } = pair();
    const seen: [string, string, string, number][] = [
      ['tools/call', 'echo', '', 0.0004],
      ['tools/call', 'echo', '', 0.02],
      ['ping', '', '', 0.001],
      ['tools/call', 'echo', '-32603', 12],
      ['tools/call', 'x"y\\z', '', 0.5],
      ['ping', '', '', 10],
    ];
    for (const [a, b, c, v] of seen) {
      ours.cell(a, b, c).observe(v);
      theirs.observe({ a, b, c }, v);
    }
    ours.observe({ a: 'byObject', b: '', c: '' }, 0.2);
    theirs.observe({ a: 'byObject', b: '', c: '' }, 0.2);
    expect(await oursReg.metrics()).toBe(await theirsReg.metrics());
    expect(await oursReg.getMetricsAsJSON()).toEqual(await theirsReg.getMetricsAsJSON());
  });

  it('starts empty, refuses a value that is not a finite number, and forgets everything on reset', async () => {
    const { ours, theirs, oursReg, theirsReg } = pair();
    expect(await oursReg.metrics()).toBe(await theirsReg.metrics());
    expect(() => ours.cell('a', 'b', 'c').observe(Number.NaN)).toThrow(TypeError);
    ours.cell('a', 'b', 'c').observe(1);
    oursReg.resetMetrics();
    expect(await oursReg.metrics()).toBe(await theirsReg.metrics());
    theirs.observe({ a: 'q', b: '', c: '' }, 3);
    ours.cell('q', '', '').observe(3);
    expect(await oursReg.metrics()).toBe(await theirsReg.metrics());
  });
});
