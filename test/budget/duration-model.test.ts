import fc from 'fast-check';
import { firstValueFrom, take, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createDurationModel, estimateDuration, MIN_LOG_SIGMA } from '../../src/budget/duration-model.js';
import { isInvalidArgumentError } from '../../src/errors/index.js';

const durations = fc.array(fc.integer({ min: 1_000, max: 600_000 }), { minLength: 5, maxLength: 40 });

describe('estimateDuration (a robust log-normal fit)', () => {
  it('recovers the median and spread of log-normal durations', () => {
    // Deterministic log-normal samples: median 60 s, σ 0.3, from evenly spaced normal quantiles.
    const z = (p: number): number => Math.sqrt(2) * inverseErf(2 * p - 1);
    const samples = Array.from({ length: 199 }, (_, i) => 60_000 * Math.exp(0.3 * z((i + 0.5) / 199)));
    const estimate = estimateDuration(samples);
    expect(estimate.samples).toBe(199);
    expect(estimate.medianMs).toBeCloseTo(60_000, -2);
    expect(estimate.logSigma).toBeGreaterThan(0.28);
    expect(estimate.logSigma).toBeLessThan(0.32);
  });

  it('one outlier moves the median no further than the neighbouring sample, whatever its size', () => {
    fc.assert(
      fc.property(durations, fc.double({ min: 0, max: 1e9, noNaN: true }), (samples, outlier) => {
        const sorted = [...samples].sort((a, b) => a - b);
        const { medianMs } = estimateDuration([...samples, outlier]);
        // The median of n + 1 values lies between the n values' neighbours of their own median.
        const low = sorted[Math.floor((sorted.length - 1) / 2) - 1] ?? sorted[0]!;
        const high = sorted[Math.ceil((sorted.length - 1) / 2) + 1] ?? sorted.at(-1)!;
        expect(medianMs).toBeGreaterThanOrEqual(low * (1 - 1e-9));
        expect(medianMs).toBeLessThanOrEqual(high * (1 + 1e-9));
      }),
    );
  });

  it('never claims a spread below MIN_LOG_SIGMA, even for identical durations', () => {
    expect(estimateDuration(Array.from({ length: 1_000 }, () => 5_000)).logSigma).toBe(MIN_LOG_SIGMA);
  });

  it('does not trust the spread of a few samples: it is pulled towards a wide prior, less as they grow', () => {
    const few = estimateDuration([10_000, 10_100, 10_200]).logSigma;
    const many = estimateDuration(Array.from({ length: 30 }, (_, i) => 10_000 + (i % 3) * 100)).logSigma;
    expect(few).toBeGreaterThan(0.25);
    expect(many).toBeLessThan(few / 2);
  });
});

describe('createDurationModel', () => {
  it('is cold until a node has minSamples durations', () => {
    const model = createDurationModel({ minSamples: 3 });
    model.record('c-1', 'n-1', 10_000);
    model.record('c-1', 'n-1', 11_000);
    expect(model.estimate('c-1', 'n-1')).toBeUndefined();
    model.record('c-1', 'n-1', 12_000);
    expect(model.estimate('c-1', 'n-1')).toMatchObject({ samples: 3, medianMs: 11_000 });
    expect(model.estimate('c-1', 'n-2')).toBeUndefined();
    expect(model.estimate('c-2', 'n-1')).toBeUndefined();
  });

  it('keeps the last `window` durations of a node, so it follows a workflow that got slower', () => {
    const model = createDurationModel({ window: 4 });
    for (const ms of [1_000, 1_000, 1_000, 1_000, 9_000, 9_000, 9_000, 9_000]) model.record('c', 'n', ms);
    expect(model.estimate('c', 'n')?.medianMs).toBe(9_000);
    expect(model.toJSON().nodes[0]?.samplesMs).toEqual([9_000, 9_000, 9_000, 9_000]);
  });

  it('holds at most maxNodes nodes, forgetting the least recently used', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 200 }), fc.integer({ min: 1, max: 10 }), (nodes, maxNodes) => {
        const model = createDurationModel({ maxNodes, minSamples: 1 });
        for (const node of nodes) model.record('c', `n-${String(node)}`, 1_000);
        const kept = model.toJSON().nodes.map((entry) => entry.nodeId);
        // The last maxNodes distinct nodes recorded, oldest first.
        const lastUsed = [...new Set([...nodes].reverse())].slice(0, maxNodes).reverse().map((node) => `n-${String(node)}`);
        expect(kept).toEqual(lastUsed);
      }),
    );
    const model = createDurationModel({ maxNodes: 2, minSamples: 1 });
    model.record('c', 'a', 1);
    model.record('c', 'b', 1);
    model.record('c', 'a', 1);
    model.record('c', 'c', 1);
    expect(model.toJSON().nodes.map((entry) => entry.nodeId)).toEqual(['a', 'c']);
  });

  it('ignores what is not a duration', () => {
    const model = createDurationModel({ minSamples: 1 });
    for (const ms of [Number.NaN, -1, Number.POSITIVE_INFINITY, 31 * 60_000]) model.record('c', 'n', ms);
    expect(model.toJSON().nodes).toEqual([]);
  });

  it('exports as JSON and imports it back, adding to what it has', () => {
    const model = createDurationModel();
    for (const ms of [10_000, 12_000, 14_000]) model.record('c-1', 'n-1', ms);
    const json = JSON.parse(JSON.stringify(model.toJSON())) as unknown;
    const copy = createDurationModel({ from: json });
    expect(copy.estimate('c-1', 'n-1')).toEqual(model.estimate('c-1', 'n-1'));
    copy.import(json);
    expect(copy.estimate('c-1', 'n-1')?.samples).toBe(6);
  });

  it('refuses an import that is not an exported model, with InvalidArgumentError', () => {
    const model = createDurationModel();
    for (const bad of [null, 3, { version: 2, nodes: [] }, { version: 1 }, { version: 1, nodes: [{ canvasId: 'c', nodeId: 1, samplesMs: [] }] }, { version: 1, nodes: [{ canvasId: 'c', nodeId: 'n', samplesMs: [-5] }] }]) {
      let caught: unknown;
      try {
        model.import(bad);
      } catch (error) {
        caught = error;
      }
      expect(isInvalidArgumentError(caught)).toBe(true);
    }
    expect(model.toJSON().nodes).toEqual([]);
  });

  it('refuses, by value, an import that only looks like a model: oversized ids and counts, holes, getters, throwing proxies', () => {
    const node = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({ canvasId: 'c-1', nodeId: 'node-a', samplesMs: [9_000], ...extra });
    const sparse: unknown[] = [];
    sparse[2] = node();
    const sparseSamples: number[] = [1_000];
    sparseSamples[2] = 2_000;
    const withGetter = node();
    Object.defineProperty(withGetter, 'canvasId', { get: () => 'c-1', enumerable: true });
    const throwing = new Proxy(node(), {
      get: () => {
        throw new Error('trap');
      },
      getOwnPropertyDescriptor: () => {
        throw new Error('trap');
      },
    });
    const hostile: readonly (readonly [string, unknown])[] = [
      ['a 5 MB canvas id', { version: 1, nodes: [node({ canvasId: `c-${'x'.repeat(5_000_000)}` })] }],
      ['an empty node id', { version: 1, nodes: [node({ nodeId: '' })] }],
      ['too many samples', { version: 1, nodes: [node({ samplesMs: Array.from({ length: 10_001 }, () => 1_000) })] }],
      ['too many nodes', { version: 1, nodes: { length: 100_001 } }],
      ['a length past the nodes bound', { version: 1, nodes: Object.assign([], { length: 100_001 }) }],
      ['a sparse nodes array', { version: 1, nodes: sparse }],
      ['a sparse samples array', { version: 1, nodes: [node({ samplesMs: sparseSamples })] }],
      ['a getter for an id', { version: 1, nodes: [withGetter] }],
      ['a getter for the nodes', Object.defineProperty({ version: 1 }, 'nodes', { get: () => [node()], enumerable: true })],
      ['a proxy whose traps throw', { version: 1, nodes: [throwing] }],
      ['a proxy of the whole model whose traps throw', new Proxy({ version: 1, nodes: [] }, { getOwnPropertyDescriptor: () => { throw new Error('trap'); } })],
    ];
    for (const [what, bad] of hostile) {
      const model = createDurationModel();
      let caught: unknown;
      try {
        model.import(bad);
      } catch (error) {
        caught = error;
      }
      expect(isInvalidArgumentError(caught), what).toBe(true);
      expect(model.toJSON().nodes, what).toEqual([]);
    }
  });

  it('reads a proxy of a model once, keeping the values it first gave', () => {
    // Each sample reads as a duration the first time, and as -1 (not one) ever after.
    const seen = new Set<PropertyKey>();
    const later = (key: PropertyKey): boolean => {
      if (key === 'length' || typeof key === 'symbol') return false;
      const again = seen.has(key);
      seen.add(key);
      return again;
    };
    const samples = new Proxy([9_000, 10_000, 11_000], {
      get: (target, key, receiver) => (later(key) ? -1 : Reflect.get(target, key, receiver) as unknown),
      getOwnPropertyDescriptor: (target, key) => {
        const descriptor = Reflect.getOwnPropertyDescriptor(target, key);
        return later(key) && descriptor !== undefined ? { ...descriptor, value: -1 } : descriptor;
      },
    });
    const model = createDurationModel();
    model.import({ version: 1, nodes: [{ canvasId: 'c-1', nodeId: 'node-a', samplesMs: samples }] });
    expect(model.toJSON().nodes).toEqual([{ canvasId: 'c-1', nodeId: 'node-a', samplesMs: [9_000, 10_000, 11_000] }]);
  });

  it('shows its state on subscription and after every change', async () => {
    const model = createDurationModel({ minSamples: 1 });
    const views = firstValueFrom(model.state$.pipe(take(3), toArray()));
    model.record('c', 'n', 2_000);
    model.import({ version: 1, nodes: [{ canvasId: 'c', nodeId: 'm', samplesMs: [3_000] }] });
    const [empty, one, two] = await views;
    expect(empty?.nodes).toEqual([]);
    expect(one?.nodes).toEqual([{ canvasId: 'c', nodeId: 'n', samples: 1, estimate: estimateDuration([2_000]) }]);
    expect(two?.nodes.map((node) => node.nodeId)).toEqual(['n', 'm']);
  });

  it('refuses sizes that are not positive integers', () => {
    expect(() => createDurationModel({ maxNodes: 0 })).toThrow(/maxNodes/);
    expect(() => createDurationModel({ window: 1.5 })).toThrow(/window/);
  });
});

/** Winitzki's approximation of erf⁻¹, good to about 2e-3: enough to lay out test samples. */
function inverseErf(x: number): number {
  const a = 0.147;
  const ln = Math.log(1 - x * x);
  const first = 2 / (Math.PI * a) + ln / 2;
  return Math.sign(x) * Math.sqrt(Math.sqrt(first * first - ln / a) - first);
}

describe('createDurationModel, when a workflow changes', () => {
  it('a fan-out\'s first, shortest durations do not make the rest outliers: outliers count from 8 samples on', () => {
    const model = createDurationModel();
    for (const ms of [100_000, 101_000, 102_000, 250_000, 260_000, 270_000, 280_000]) model.record('c', 'n', ms);
    expect(model.estimate('c', 'n')?.samples).toBe(7);
  });

  it('keeps one outlier out of the fit, and follows three in a row at once', () => {
    const model = createDurationModel();
    for (let i = 0; i < 20; i += 1) model.record('c', 'n', 10_000 + (i % 5) * 200);
    model.record('c', 'n', 90_000);
    expect(model.estimate('c', 'n')?.medianMs).toBeLessThan(11_000);
    model.record('c', 'n', 10_400);
    model.record('c', 'n', 30_000);
    model.record('c', 'n', 31_000);
    expect(model.estimate('c', 'n')?.medianMs).toBeLessThan(11_000);
    model.record('c', 'n', 29_000);
    // Three outliers in a row: the node starts over from them.
    expect(model.estimate('c', 'n')).toMatchObject({ samples: 3, medianMs: 30_000 });
  });
});
