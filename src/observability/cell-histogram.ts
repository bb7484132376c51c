import type { Registry } from 'prom-client';

/** One label set's counts: `buckets[i]` holds the values whose first bound ≥ them is `bounds[i]`. */
export interface HistogramCell {
  observe(value: number): void;
}

class Cell implements HistogramCell {
  readonly buckets: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Record<string, string>,
    private readonly bounds: readonly number[],
  ) {
    this.buckets = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${String(value)}`);
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.buckets[i]!++;
        break;
      }
    }
    this.sum += value;
    this.count++;
  }
}

type Tree = Map<string, Tree | Cell>;

interface Sample {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName: string;
  /** As prom-client has it: null on a bucket, undefined on _sum and _count (no exemplars here). */
  exemplar: null | undefined;
}

/**
 * A Prometheus histogram on the data path, scraped through prom-client's registry in the text
 * prom-client's own Histogram writes. prom-client rebuilds and hashes a label key on every
 * observe (and `.labels()` children do the same); here a label set is looked up value by value in
 * a tree of Maps and its cell counts in place: nothing is allocated per observation.
 */
export class CellHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #bounds: readonly number[];
  #cells: Cell[] = [];
  #tree: Tree = new Map();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly L[],
    buckets: readonly number[],
    registry: Registry,
  ) {
    this.#bounds = [...buckets].sort((a, b) => a - b);
    registry.registerMetric(this as never);
  }

  /** The cell of one label set, values in `labelNames` order. */
  cell(...values: string[]): HistogramCell {
    let node = this.#tree;
    const last = this.labelNames.length - 1;
    for (let i = 0; i < last; i++) {
      const v = values[i] ?? '';
      let next = node.get(v) as Tree | undefined;
      if (!next) node.set(v, (next = new Map()));
      node = next;
    }
    const v = values[last] ?? '';
    let cell = node.get(v) as Cell | undefined;
    if (!cell) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i] ?? ''));
      cell = new Cell(labels, this.#bounds);
      node.set(v, cell);
      this.#cells.push(cell);
    }
    return cell;
  }

  observe(labels: Record<L, string>, value: number): void {
    this.cell(...this.labelNames.map((n) => labels[n])).observe(value);
  }

  reset(): void {
    this.#cells = [];
    this.#tree = new Map();
  }

  /** What prom-client's Histogram gives its registry for the text format (labels of a cell shared). */
  getForPromString(): { name: string; help: string; type: string; values: Sample[]; aggregator: string } {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const cell of this.#cells) {
      let acc = 0;
      this.#bounds.forEach((le, i) => {
        acc += cell.buckets[i]!;
        values.push({ labels: { le }, sharedLabels: cell.labels, value: acc, metricName: bucket, exemplar: null });
      });
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: cell.labels, value: cell.count, metricName: bucket, exemplar: null },
        { labels: {}, sharedLabels: cell.labels, value: cell.sum, metricName: `${this.name}_sum`, exemplar: undefined },
        {
          labels: {},
          sharedLabels: cell.labels,
          value: cell.count,
          metricName: `${this.name}_count`,
          exemplar: undefined,
        },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The JSON form (registry.getMetricsAsJSON): each sample's labels in one object. */
  get(): { name: string; help: string; type: string; values: Sample[]; aggregator: string } {
    const data = this.getForPromString();
    data.values = data.values.map(({ sharedLabels, labels, ...rest }) => ({
      ...rest,
      labels: { ...labels, ...sharedLabels },
    }));
    return data;
  }
}
