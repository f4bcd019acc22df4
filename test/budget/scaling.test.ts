import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod/mini';
import { createAccountBudget } from '../../src/budget/index.js';
import { IndexedHeap } from '../../src/budget/fair-queue.js';
import { createMemoryLedger } from '../../src/budget/ledger.js';
import type { MemoryLedger } from '../../src/budget/ledger.js';
import { BudgetCore } from '../../src/budget/budget-core.js';
import type { Endpoint, RequestPriority } from '../../src/domain/endpoints.js';
import type { GateTicket } from '../../src/domain/requests.js';
import { clockScheduler, createManualClock } from '../../src/emulator/index.js';
import { normalizeOptions } from '../../src/http/options.js';
import { createTransport } from '../../src/http/transport.js';
import { Simulation } from './simulation.js';

/**
 * The budget's cost per operation, counted rather than timed (no wall clock in tests): a heap's
 * comparisons, and how often the budget's core looks at the tickets of waiting requests. A core that
 * scans its queue per step (as this one once did: 20,000 queued then cancelled took 265 s of CPU)
 * reads every waiting ticket at every step, n² in all.
 */
describe('the budget\'s cost per operation', () => {
  it('keeps a heap in O(log n) comparisons per push and per removal from anywhere', () => {
    const n = 20_000;
    let comparisons = 0;
    const heap = new IndexedHeap<'slot', { readonly value: number; slot: number }>('slot', (a, b) => {
      comparisons += 1;
      return a.value < b.value;
    });
    const items = Array.from({ length: n }, (_, index) => ({ value: (index * 7_919) % n, slot: -1 }));
    for (const item of items) heap.push(item);
    // Removed in an order unrelated to the heap's: from the middle, mostly.
    for (let index = 0; index < n; index++) expect(heap.remove(items[(index * 104_729) % n]!)).toBe(true);
    expect(heap.size).toBe(0);
    expect(comparisons).toBeLessThan(4 * n * Math.log2(n));
  });

  it('takes the head of a heap in about one comparison per level, as a burst of cancellations in arrival order does', () => {
    const n = 16_384;
    let comparisons = 0;
    const heap = new IndexedHeap<'slot', { readonly value: number; slot: number }>('slot', (a, b) => {
      comparisons += 1;
      return a.value < b.value;
    });
    const items = Array.from({ length: n }, (_, value) => ({ value, slot: -1 }));
    for (const item of items) heap.push(item);
    comparisons = 0;
    for (const item of items) expect(heap.remove(item)).toBe(true);
    // A sift-down that compares the moved leaf at every level too takes twice log2(n) (28 here).
    expect(comparisons / n).toBeLessThan(1.25 * Math.log2(n));
  });

  it('pops in order and finds every item again, whatever is pushed and removed', () => {
    fc.assert(
      fc.property(fc.array(fc.integer(), { maxLength: 200 }), fc.array(fc.nat(), { maxLength: 100 }), (values, removals) => {
        const heap = new IndexedHeap<'slot', { readonly value: number; slot: number }>('slot', (a, b) => a.value < b.value);
        const items = values.map((value) => ({ value, slot: -1 }));
        for (const item of items) heap.push(item);
        const removed = new Set<number>();
        for (const removal of removals) {
          if (items.length === 0) break;
          const index = removal % items.length;
          expect(heap.remove(items[index]!)).toBe(!removed.has(index));
          removed.add(index);
        }
        const popped: number[] = [];
        for (let item = heap.pop(); item !== undefined; item = heap.pop()) popped.push(item.value);
        expect(popped).toEqual(items.filter((_, index) => !removed.has(index)).map((item) => item.value).sort((a, b) => a - b));
      }),
    );
  });

  it('looks at each waiting request a bounded number of times: 20,000 queued then cancelled, whatever their classes', () => {
    const n = 20_000;
    let reads = 0;
    const kinds: readonly (readonly [Endpoint, RequestPriority])[] = [['detail', 'interactive'], ['status', 'status'], ['output', 'output'], ['status', 'status']];
    const counted = (index: number): GateTicket => {
      const [endpoint, priority] = kinds[index % kinds.length]!;
      const key = `we-${index % 1_000}`;
      return {
        get endpoint() {
          reads += 1;
          return endpoint;
        },
        get priority() {
          reads += 1;
          return priority;
        },
        get key() {
          reads += 1;
          return key;
        },
      };
    };
    const sim = new Simulation({ burst: 1 });
    // The budget's time stands still: one request goes, every other one waits.
    const ids = Array.from({ length: n }, (_, index) => sim.enqueue(counted(index)));
    expect(sim.snapshot().queued.total).toBe(n - 1);
    for (const id of ids) sim.cancel(id);
    expect(sim.snapshot().queued.total).toBe(0);
    expect(sim.steps).toBe(2 * n);
    // A constant number of reads per request (about 20 here); a scan per step would be ~n² = 4 × 10⁸.
    expect(reads).toBeLessThan(40 * n);
  });
  it('applies the account\'s rules once per instant, not once per request, when a burst is queued and cancelled at one instant', () => {
    const n = 1_000;
    const ledger = createMemoryLedger();
    let changes = 0;
    const counted: MemoryLedger = {
      get record() {
        return ledger.record;
      },
      transact(now, change) {
        changes += 1;
        return ledger.transact(now, change);
      },
      replace: (record) => {
        ledger.replace(record);
      },
    };
    const core = new BudgetCore({ burst: 1 }, counted);
    // The first request goes (one change: its send); every other one waits for the minute.
    for (let id = 0; id < n; id++) core.step({ type: 'enqueue', id, ticket: { endpoint: 'status', priority: 'status', key: `we-${id}` } }, 1_000);
    for (let id = 0; id < n; id++) core.step({ type: 'cancel', id }, 1_000);
    expect(core.queue.size).toBe(0);
    // A prune and the one send; before, every step applied the rules twice (4,000 changes here).
    expect(changes).toBeLessThanOrEqual(3);
  });
});

describe('requests waiting in the budget, cancelled by unsubscribing', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('hold no AbortController while they wait, and leave without an abort event', () => {
    // Node builds an abort event and a DOMException per abort(): for thousands of runs' reads left at
    // once (a deploy), most of the cost of leaving. A request owns a controller only once it is sent.
    let controllers = 0;
    vi.stubGlobal('AbortController', class extends AbortController {
      constructor() {
        super();
        controllers += 1;
      }
    });
    const n = 1_000;
    const budget = createAccountBudget({ burst: 1, scheduler: clockScheduler(createManualClock()) });
    const transport = createTransport('key', normalizeOptions({ apiKey: 'key', baseUrl: 'http://127.0.0.1:9/v1', fetch: () => new Promise<Response>(() => undefined), gate: budget }));
    const subscriptions = Array.from({ length: n }, (_, index) =>
      transport.request(() => ({ endpoint: 'status', path: `openapi/workflow/we-${index}/status`, key: `we-${index}`, schema: z.unknown() })).subscribe({ error: () => undefined }),
    );
    // The burst's one request was sent (its exchange owns a controller); every other one waits.
    expect(budget.snapshot().queued.total).toBe(n - 1);
    for (const subscription of subscriptions) subscription.unsubscribe();
    expect(budget.snapshot().queued.total).toBe(0);
    expect(controllers).toBeLessThanOrEqual(1);
  });
});
