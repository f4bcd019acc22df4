/**
 * Does a run's progress total stay put? Every sample workflow of the emulator, in both output modes,
 * with and without its plan read first (`checkVariables`), a few times each: a stream "grew" when a
 * state before the final one has a larger `progress.total` than an earlier state.
 *
 *   npx tsx bench/progress-total.ts [repetitions]      (default 2)
 */
import { lastValueFrom, toArray } from 'rxjs';
import { createClient, type RunState, toRunState } from '../src/index.js';
import { createEmulator } from '../src/emulator/index.js';

const CANVASES = ['c-sample-linear', 'c-sample-parallel', 'c-sample-branch-failure', 'c-sample-files', 'c-sample-news', 'c-sample-sales', 'c-sample-support'];

/** A state (before the final one, unless `final`) whose total is above an earlier state's. */
function grew(states: readonly RunState[], final = false): boolean {
  let most = 0;
  for (const state of final ? states : states.slice(0, -1)) {
    if (state.progress.total < most) continue;
    if (most > 0 && state.progress.total > most) return true;
    most = state.progress.total;
  }
  return false;
}

const repetitions = Number(process.argv[2] ?? 2);
const emulator = await createEmulator({ speed: 40, rateLimit: false });
const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, scheduler: emulator.scheduler, budget: { requestsPerMinute: 100_000, requestsPerDay: 10_000_000 }, polling: { minMs: 500, maxMs: 2_000 } });
const rows: { canvasId: string; output: string; plan: boolean; grew: boolean; grewAtEnd: boolean }[] = [];
await Promise.all(
  CANVASES.flatMap((canvasId) =>
    (['stream', 'final'] as const).flatMap((output) =>
      [false, true].flatMap((plan) =>
        Array.from({ length: repetitions }, async () => {
          // Identical starts are spaced by the budget (service.md §2.2).
          const states = await lastValueFrom(client.run(canvasId, {}, { output, checkVariables: plan, failOnWorkflowError: false }).pipe(toRunState(), toArray()));
          rows.push({ canvasId, output, plan, grew: grew(states), grewAtEnd: !grew(states) && grew(states, true) });
          if (process.env['SHOW'] !== undefined && grew(states)) console.log(canvasId, output, states.map((state) => `${state.progress.total}:${state.nodes.map((node) => `${node.nodeId.replace('node-', '')}=${node.status}${node.task ? '*' : ''}`).join(',')}`).join(' | '));
        }),
      ),
    ),
  ),
);
await emulator.close();
const count = (filter: (row: (typeof rows)[number]) => boolean, key: 'grew' | 'grewAtEnd' = 'grew'): string => `${rows.filter((row) => filter(row) && row[key]).length} of ${rows.filter(filter).length}`;
console.log(`total grew mid-run: ${count(() => true)} streams; with the plan read: ${count((row) => row.plan)}; without: ${count((row) => !row.plan)}`);
console.log(`total grew only with the result: ${count(() => true, 'grewAtEnd')} streams; with the plan read: ${count((row) => row.plan, 'grewAtEnd')}; without: ${count((row) => !row.plan, 'grewAtEnd')}`);
