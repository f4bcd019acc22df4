/**
 * The run relay under a crowd: 1,000 viewers over 50 executions on one relay (real HTTP on 127.0.0.1;
 * the viewers are SSE readers in a few child processes, `relay-viewers.ts`), against the same 50
 * executions followed by 50 plain `client.watch`es. Both sides run the same workflow on an emulator on
 * a manual clock, moved timer by timer, with the client's default budget (100 requests a minute).
 *
 * - Requests to the service (status and output reads) of the relay's side over the plain side's (aim ≤ 1.05×).
 * - Delay, in real ms, from a poll's answer reaching the client to the last viewer of that execution
 *   having the event it caused (aim p99 ≤ 50 ms). An event is timed from the first answer of its
 *   execution in the clock step it came in: an event of an output read that followed a status read in
 *   the same step is timed from the status answer, so the figures are an upper bound.
 * - Heap per viewer in the relay's process, after a full collection: 50 viewers (one per execution)
 *   connected, then the other 950; their difference over 950 (aim ≤ 16 KiB).
 *
 * `npm run bench` runs it in a process of its own with the collector exposed; alone:
 *
 *     node --expose-gc --import tsx bench/relay.ts
 *
 * Prints a table and writes `bench/results/relay.json`. About a minute on 2 cores.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Subscription } from 'rxjs';
import { type Client, createClient } from '../src/client.js';
import { createEmulator, createManualClock, type Emulator, type ManualClock, type WorkflowDefinition } from '../src/emulator/index.js';
import { createRunRelay, createRunTokens, toNodeListener } from '../src/relay/index.js';
import { table, writeResults } from './harness/report.js';
import { type Summary, summarize } from './harness/stats.js';

export interface RelayBenchOptions {
  readonly viewers?: number;
  readonly executions?: number;
  /** Child processes holding the viewers. */
  readonly children?: number;
  /** How long each step of the workflow takes, in emulator ms (default a minute). */
  readonly nodeMs?: number;
}

export interface RelayBenchResults {
  readonly viewers: number;
  readonly executions: number;
  readonly children: number;
  /** Status and output requests to the service. */
  readonly requests: { readonly relay: number; readonly plainWatches: number; readonly ratio: number };
  /** Real ms from a poll's answer to the last viewer's event (see the file's note). */
  readonly delayMs: Summary & { readonly max: number | null };
  /** Events that reached every viewer with no answer of their execution in their step (not timed). */
  readonly untimedEvents: number;
  readonly heapPerViewerBytes: number;
  /** False when run without `--expose-gc`: heap then read without a full collection. */
  readonly gcExposed: boolean;
  readonly steps: { readonly relay: number; readonly plainWatches: number };
  /** CPU of this process (relay, client, emulator) while the runs went on, ms; the plain side's is the same work without the relay. */
  readonly cpuMs: { readonly relay: number; readonly plainWatches: number };
  readonly realSeconds: number;
}

const CANVAS = 'c-relay-bench';
const MINUTE = 60_000;
const SECRET = 'the relay bench secret, thirty-two bytes or more';

/** Three steps, two in parallel, each saying something as it goes: status, node, message and file events. */
function workflow(nodeMs: number): WorkflowDefinition {
  return {
    canvasId: CANVAS,
    title: 'Relay bench: research, two drafts, a summary',
    nodes: [
      { id: 'node-start', type: 'start' },
      { id: 'node-research', title: 'Research', parents: ['node-start'], durationMs: nodeMs, messages: [{ content: 'Found three sources.' }, { content: 'Read them.' }] },
      { id: 'node-draft-a', title: 'Draft A', parents: ['node-research'], durationMs: nodeMs, messages: [{ content: 'Draft A written.' }] },
      { id: 'node-draft-b', title: 'Draft B', parents: ['node-research'], durationMs: 1.5 * nodeMs, messages: [{ content: 'Draft B written.' }] },
      { id: 'node-summary', title: 'Summary', parents: ['node-draft-a', 'node-draft-b'], durationMs: nodeMs, messages: [{ content: 'Summed up.' }], files: [{ name: 'summary.md', type: 'text/markdown', content: '# Summary' }] },
    ],
  };
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const now = (): number => performance.timeOrigin + performance.now();
const cpuMs = (since: NodeJS.CpuUsage): number => {
  const { user, system } = process.cpuUsage(since);
  return (user + system) / 1000;
};

/** The execution a read is for, when `url` is a status or output read. */
function readOf(url: string): string | undefined {
  return /\/openapi\/workflow\/([^/]+)\/(?:status|output)(?:\?|$)/u.exec(url)?.[1];
}

/** A world: an emulator on its own manual clock, the client under test, and its reads counted and timed. */
interface World {
  readonly clock: ManualClock;
  readonly emulator: Emulator;
  readonly client: Client;
  readonly executionIds: readonly string[];
  reads: number;
  inFlight: number;
  lastActivity: number;
  /** The first answer of each execution since the step began (real ms). */
  readonly stepAnswers: Map<string, number>;
}

async function world(executions: number, nodeMs: number): Promise<World> {
  const clock = createManualClock();
  const emulator = await createEmulator({ clock, listen: false, workflows: [workflow(nodeMs)] });
  // Starts through a client of their own (budget off), so that the one under test counts only reads.
  const starter = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, budget: false });
  // Distinct inputs: identical starts within 1 s are refused (service.md §2.2).
  const executionIds = await Promise.all(Array.from({ length: executions }, async (_, n) => (await starter.executions.start(CANVAS, { variables: { n } })).executionId));
  const state: World = { clock, emulator, client: undefined as unknown as Client, executionIds, reads: 0, inFlight: 0, lastActivity: now(), stepAnswers: new Map() };
  const counted: typeof fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const executionId = readOf(url);
    if (executionId === undefined) return emulator.fetch(input, init);
    state.reads += 1;
    state.inFlight += 1;
    state.lastActivity = now();
    try {
      return await emulator.fetch(input, init);
    } finally {
      state.inFlight -= 1;
      const at = now();
      state.lastActivity = at;
      if (!state.stepAnswers.has(executionId)) state.stepAnswers.set(executionId, at);
    }
  };
  return Object.assign(state, { client: createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: counted, scheduler: emulator.scheduler }) });
}

/** Waits until no read is in flight and nothing happened for a while (real time: readiness only, the clock stands still). */
async function settle(state: World, quietMs = 25): Promise<void> {
  const until = now() + 10_000;
  for (;;) {
    await delay(5);
    if ((state.inFlight === 0 && now() - state.lastActivity >= quietMs) || now() > until) return;
  }
}

/** Moves the clock to its next timer (at least 500 ms a step) and settles, until `done`; answers the steps taken. */
async function stepUntil(state: World, done: () => boolean, onStep: () => void = () => undefined): Promise<number> {
  let steps = 0;
  for (; !done() && steps < 20_000; steps++) {
    state.stepAnswers.clear();
    const next = state.clock.nextTimerAt() ?? state.clock.now() + 500;
    state.clock.advance(Math.max(500, next - state.clock.now()));
    await settle(state);
    onStep();
  }
  if (!done()) throw new Error('the runs did not end');
  return steps;
}

async function heapUsed(): Promise<number> {
  const collect = (globalThis as { gc?: () => void }).gc;
  for (let round = 0; round < 3; round++) {
    collect?.();
    await delay(20);
  }
  return process.memoryUsage().heapUsed;
}

/** The plain side: one `client.watch` per execution. */
async function plainWatches(executions: number, nodeMs: number): Promise<{ reads: number; steps: number; cpuMs: number }> {
  const state = await world(executions, nodeMs);
  let finished = 0;
  const subscriptions: Subscription[] = state.executionIds.map((id) =>
    state.client.watch(id, { failOnWorkflowError: false }).subscribe({
      next: (event) => {
        state.lastActivity = now();
        if (event.type === 'finished') finished += 1;
      },
    }),
  );
  try {
    const cpu = process.cpuUsage();
    const steps = await stepUntil(state, () => finished === executions);
    return { reads: state.reads, steps, cpuMs: cpuMs(cpu) };
  } finally {
    for (const subscription of subscriptions) subscription.unsubscribe();
    await state.emulator.close();
  }
}

type ChildMessage =
  | { readonly kind: 'connected'; readonly count: number }
  | { readonly kind: 'event'; readonly executionId: string; readonly seq: number; readonly type: string; readonly at: number }
  | { readonly kind: 'ended'; readonly count: number };

/** Measures the relay under `viewers` viewers of `executions` executions; prints nothing. */
export async function relayBench(options: RelayBenchOptions = {}): Promise<RelayBenchResults> {
  const viewers = options.viewers ?? 1_000;
  const executions = options.executions ?? 50;
  const childCount = options.children ?? 4;
  const nodeMs = options.nodeMs ?? MINUTE;
  const began = performance.now();
  const plain = await plainWatches(executions, nodeMs);

  const state = await world(executions, nodeMs);
  const tokens = createRunTokens({ secret: SECRET, scheduler: state.emulator.scheduler });
  const relay = createRunRelay({ client: state.client, tokens, basePath: '/flowstream', scheduler: state.emulator.scheduler });
  const server = createServer(toNodeListener(relay));
  // Every viewer holds one connection: the default backlog is enough, the header timeout is not in play.
  server.maxConnections = viewers + 100;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/flowstream`;
  const children: ChildProcess[] = Array.from({ length: childCount }, () =>
    fork(fileURLToPath(new URL('relay-viewers.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  );
  try {
    const tokenOf = new Map(await Promise.all(state.executionIds.map(async (id) => [id, await tokens.sign({ executionId: id, scope: ['read'], ttlMs: 24 * 60 * MINUTE })] as const)));
    // Viewer v follows execution v mod N, in child ⌊v / (viewers / children)⌋: every child has viewers of every execution.
    const perChild = Math.ceil(viewers / childCount);
    const plan = Array.from({ length: viewers }, (_, v) => ({ child: Math.floor(v / perChild), executionId: state.executionIds[v % executions] ?? '' }));
    const childrenOf = new Map<string, Set<number>>();
    for (const { child, executionId } of plan) (childrenOf.get(executionId) ?? childrenOf.set(executionId, new Set()).get(executionId)!).add(child);

    let connected = 0;
    let ended = 0;
    const endedBy = new Map<number, number>();
    /** Per event: the children that reported it, the latest of their times, and its cause's answer time. */
    const pending = new Map<string, { children: number; lastAt: number; cause: number | undefined }>();
    const delays: number[] = [];
    let untimed = 0;
    const debugRows: string[] = [];
    children.forEach((child, index) => {
      child.on('message', (message: ChildMessage) => {
        state.lastActivity = now();
        switch (message.kind) {
          case 'connected':
            connected += message.count;
            break;
          case 'ended':
            endedBy.set(index, message.count);
            ended = [...endedBy.values()].reduce((sum, count) => sum + count, 0);
            break;
          case 'event': {
            const key = `${message.executionId} ${message.seq}`;
            const entry = pending.get(key) ?? { children: 0, lastAt: 0, cause: state.stepAnswers.get(message.executionId) };
            entry.children += 1;
            entry.lastAt = Math.max(entry.lastAt, message.at);
            if (entry.children < (childrenOf.get(message.executionId)?.size ?? 0)) {
              pending.set(key, entry);
              break;
            }
            pending.delete(key);
            if (entry.cause === undefined) untimed += 1;
            else {
              delays.push(entry.lastAt - entry.cause);
              if (process.env['RELAY_BENCH_DEBUG'] !== undefined) debugRows.push(`${(entry.lastAt - entry.cause).toFixed(1)} ${message.type} ${message.executionId} answers-in-step=${state.stepAnswers.size}`);
            }
            break;
          }
          default:
            break;
        }
      });
    });
    const connect = async (slice: typeof plan): Promise<void> => {
      const target = connected + slice.length;
      children.forEach((child, index) => {
        const mine = slice.filter((viewer) => viewer.child === index).map(({ executionId }) => ({ executionId, token: tokenOf.get(executionId) ?? '' }));
        if (mine.length > 0) child.send({ kind: 'connect', relay: base, viewers: mine });
      });
      // A stream answers once its execution's first reading came: time moves (timer by timer) until every viewer is in.
      for (const until = now() + 60_000; connected < target; ) {
        if (now() > until) throw new Error(`only ${connected} of ${target} viewers connected`);
        await delay(50);
        if (connected < target && state.inFlight === 0) {
          const next = state.clock.nextTimerAt();
          if (next !== undefined) state.clock.advance(Math.max(0, next - state.clock.now()));
        }
      }
      await settle(state, 100);
    };

    // One viewer per execution: the follows, their first events, the relay's own state.
    await connect(plan.slice(0, executions));
    const heapBefore = await heapUsed();
    await connect(plan.slice(executions));
    const heapAfter = await heapUsed();
    // The events so far were replays to late viewers, not answers: only the steps' are timed.
    untimed = 0;
    delays.length = 0;
    debugRows.length = 0;
    pending.clear();

    const cpu = process.cpuUsage();
    const steps = await stepUntil(state, () => ended === viewers);
    const relayCpuMs = cpuMs(cpu);
    // RELAY_BENCH_DEBUG=1: the slowest events, to see where a tail comes from.
    if (process.env['RELAY_BENCH_DEBUG'] !== undefined) console.error(debugRows.sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a)).slice(0, 20));
    const summary = summarize(delays);
    return {
      viewers,
      executions,
      children: childCount,
      requests: { relay: state.reads, plainWatches: plain.reads, ratio: state.reads / plain.reads },
      delayMs: { ...summary, max: delays.length === 0 ? null : Math.max(...delays) },
      untimedEvents: untimed,
      heapPerViewerBytes: Math.round((heapAfter - heapBefore) / (viewers - executions)),
      gcExposed: typeof (globalThis as { gc?: unknown }).gc === 'function',
      steps: { relay: steps, plainWatches: plain.steps },
      cpuMs: { relay: relayCpuMs, plainWatches: plain.cpuMs },
      realSeconds: (performance.now() - began) / 1000,
    };
  } finally {
    for (const child of children) if (child.connected) child.send({ kind: 'close' });
    relay.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => { resolve(); }));
    await state.emulator.close();
  }
}

const ms = (value: number | null): string => (value === null ? '—' : value.toFixed(1));

export function relayBenchTable(results: RelayBenchResults): string {
  return table(
    ['measure', 'figure', 'aim'],
    [
      ['status + output requests, relay', String(results.requests.relay), ''],
      [`status + output requests, ${results.executions} plain watches`, String(results.requests.plainWatches), ''],
      ['ratio relay / plain', `${results.requests.ratio.toFixed(3)}×`, '≤ 1.05×'],
      [`answer → last viewer's event, p50 (ms, ${results.delayMs.count} events)`, ms(results.delayMs.p50), ''],
      ['answer → last viewer\'s event, p99 (ms)', ms(results.delayMs.p99), '≤ 50'],
      ['answer → last viewer\'s event, max (ms)', ms(results.delayMs.max), ''],
      ['CPU of the process while the runs went on, relay / plain (ms)', `${results.cpuMs.relay.toFixed(0)} / ${results.cpuMs.plainWatches.toFixed(0)}`, ''],
      [`heap per viewer (KiB${results.gcExposed ? '' : ', no full GC'})`, (results.heapPerViewerBytes / 1024).toFixed(1), '≤ 16'],
    ],
  );
}

export const RELAY_TITLE = (results: Pick<RelayBenchResults, 'viewers' | 'executions' | 'children'>): string =>
  `Relay: ${results.viewers.toLocaleString('en')} viewers over ${results.executions} executions on one relay (real HTTP on 127.0.0.1, viewers in ${results.children} child processes), against ${results.executions} plain watches; the emulator on a manual clock, the client's default budget`;

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const results = await relayBench();
  console.log(`\n${RELAY_TITLE(results)}\n`);
  console.log(relayBenchTable(results));
  console.log(`→ ${await writeResults('relay', results)}  (${results.realSeconds.toFixed(0)} s of real time)`);
}
