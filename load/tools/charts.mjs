#!/usr/bin/env node
// @ts-check
// Renders the curves of a bench results file as SVG charts (vega-lite compiled to vega, rendered
// headless: no browser, no canvas, no network). Each chart is drawn only when the file has its
// rows; the charts name the results file they came from, so a page that links them says which
// run it shows.
//
//   node load/tools/charts.mjs load/results/<name>.json [--out docs/charts]
//
// connections: req/s and p99 against connections (c = 10 .. 5,000);
// sessions-scale: gateway CPU per call against sessions open, per store;
// payloads: MB/s of results through the gateway and through the stdio relay floor, per size;
// added-latency: p50 and p99 of one call at c=1, directly and through the gateway, per hop.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import * as vega from 'vega';
import * as vl from 'vega-lite';

/** @typedef {Record<string, any>} Row */

const WIDTH = 520;
const HEIGHT = 260;

/** @param {Row[]} rows @param {string} scenario */
const of = (rows, scenario) => rows.filter((r) => r.scenario === scenario && r.reqPerSec > 0);

/**
 * One chart: a vega-lite spec (data inline) rendered to SVG text.
 * @param {string} title @param {string} source @param {Record<string, unknown>} spec
 */
async function render(title, source, spec) {
  const full = /** @type {import('vega-lite').TopLevelSpec} */ ({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: title, subtitle: `bench run of ${source.slice(0, 10)} (load/results/)`, anchor: 'start' },
    description: `Rendered by load/tools/charts.mjs from load/results/${source}`,
    width: WIDTH,
    height: HEIGHT,
    config: { font: 'sans-serif', background: 'white' },
    ...spec,
  });
  const view = new vega.View(vega.parse(vl.compile(full).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

/** A log scale over the data's own range (a nice log domain starts a decade early). */
const log = { type: 'log', nice: false };

/**
 * The charts a results file has rows for, by file name (without .svg).
 * @param {Row[]} rows @param {string} source
 * @returns {Promise<Map<string, string>>}
 */
export async function charts(rows, source) {
  const out = new Map();
  const conns = of(rows, 'connections').map((r) => ({
    c: Number(/c=(\d+)/.exec(r.variant ?? '')?.[1]),
    reqPerSec: Math.round(r.reqPerSec),
    p99: r.latencyMs.p99,
  }));
  if (conns.length > 1)
    out.set(
      'connections',
      await render('Connections: throughput and p99 (call-json load)', source, {
        data: { values: conns },
        encoding: { x: { field: 'c', type: 'quantitative', scale: log, title: 'connections (log)' } },
        layer: [
          {
            mark: { type: 'line', point: true, color: '#1f77b4' },
            encoding: {
              y: { field: 'reqPerSec', type: 'quantitative', title: 'req/s', axis: { titleColor: '#1f77b4' } },
            },
          },
          {
            mark: { type: 'line', point: true, color: '#d62728', strokeDash: [4, 3] },
            encoding: { y: { field: 'p99', type: 'quantitative', title: 'p99 ms', axis: { titleColor: '#d62728' } } },
          },
        ],
        resolve: { scale: { y: 'independent' } },
      }),
    );
  const sessions = of(rows, 'sessions-scale').map((r) => ({
    sessions: r.extra?.sessionsOpen,
    store: r.extra?.store,
    cpuUs: Math.round(r.cpuUsPerReq * 10) / 10,
  }));
  if (sessions.length > 1)
    out.set(
      'sessions-scale',
      await render('Sessions open: gateway CPU per call (c=50)', source, {
        data: { values: sessions },
        mark: { type: 'line', point: true },
        encoding: {
          x: { field: 'sessions', type: 'quantitative', scale: log, title: 'sessions open (log)' },
          y: { field: 'cpuUs', type: 'quantitative', title: 'gateway CPU µs per call', scale: { zero: true } },
          color: { field: 'store', type: 'nominal', title: 'session store' },
        },
      }),
    );
  const payloads = of(rows, 'payloads').map((r) => ({
    kb: Math.round((r.extra?.size ?? 0) / 1024),
    mbPerSec: Math.round((r.extra?.mbPerSec ?? 0) * 10) / 10,
    through: r.target === 'mcp-gateway' ? 'gateway' : 'relay floor (stdio)',
  }));
  if (payloads.length > 1)
    out.set(
      'payloads',
      await render('Payloads: MB/s of results, gateway against the relay floor (c=4)', source, {
        data: { values: payloads },
        mark: { type: 'line', point: true },
        encoding: {
          x: { field: 'kb', type: 'quantitative', scale: log, title: 'result size, KB (log)' },
          y: { field: 'mbPerSec', type: 'quantitative', title: 'MB/s' },
          color: { field: 'through', type: 'nominal', title: '' },
        },
      }),
    );
  const latency = of(rows, 'added-latency').flatMap((r) => {
    const path = `${r.target === 'mcp-gateway' ? 'gateway' : r.target}: ${r.variant}`;
    return [
      { path, quantile: 'p50', us: Math.round(r.latencyMs.p50 * 1000) },
      { path, quantile: 'p99', us: Math.round(r.latencyMs.p99 * 1000) },
    ];
  });
  if (latency.length > 0)
    out.set(
      'added-latency',
      await render('One call at c=1: latency directly and through the gateway', source, {
        data: { values: latency },
        mark: 'bar',
        encoding: {
          y: { field: 'path', type: 'nominal', title: null, sort: null, axis: { labelLimit: 320 } },
          x: { field: 'us', type: 'quantitative', title: 'µs' },
          yOffset: { field: 'quantile' },
          color: { field: 'quantile', type: 'nominal', title: '' },
        },
      }),
    );
  return out;
}

async function main() {
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith('--'));
  const outAt = args.indexOf('--out');
  const outDir = outAt >= 0 ? args[outAt + 1] : 'docs/charts';
  if (!file || !outDir) {
    process.stderr.write('usage: node load/tools/charts.mjs load/results/<name>.json [--out docs/charts]\n');
    process.exit(2);
  }
  const { rows } = JSON.parse(readFileSync(file, 'utf8'));
  const made = await charts(rows, basename(file));
  if (made.size === 0) {
    process.stderr.write(`charts: ${file} has no rows of connections, sessions-scale, payloads or added-latency\n`);
    process.exit(1);
  }
  mkdirSync(outDir, { recursive: true });
  for (const [name, svg] of made) {
    writeFileSync(join(outDir, `${name}.svg`), svg);
    process.stdout.write(`charts: ${join(outDir, `${name}.svg`)}\n`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
