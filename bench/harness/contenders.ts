import { catchError, filter, lastValueFrom, map, of, tap } from 'rxjs';
import { isRateLimitError } from '../../src/errors/index.js';
import type { Runs } from '../../src/runs/runs.js';
import type { OutputMode } from '../../src/runs/poll.js';
import type { Sightings } from './sightings.js';
import type { World } from './world.js';

/** What a contender is asked to do: start `runs` executions at once and follow each to its end. */
export interface Assignment {
  /** Run `item` starts `canvasIds[item % canvasIds.length]`. */
  readonly canvasIds: readonly string[];
  readonly runs: number;
  /** Emulator ms after which the contender stops following (service.md §3.6: no execution outlives 30 min). */
  readonly deadlineMs: number;
  readonly sightings: Sightings;
  /** The number of the assignment's first run (default 0): runs of several assignments keep distinct variables. */
  readonly firstItem?: number;
}

export interface Outcome {
  /** Runs whose client saw the execution finish (and, for the loops, read its output). */
  readonly completed: number;
  /**
   * Runs that met no failed request at all: the only ones the service's own tool, which ends the watch
   * at the first error (service.md §6), would have completed. flowstream: the same as `completed`.
   */
  readonly completedWithoutError: number;
}

const canvasOf = (assignment: Assignment, item: number): string => assignment.canvasIds[item % assignment.canvasIds.length]!;

/** Each run's variables differ, as in a fan-out over inputs: no two starts are identical (service.md §2.2). */
const variablesOf = (item: number): { item: number } => ({ item });

/**
 * flowstream: `runs.run` per item, all subscribed at once; the budget paces them. `runs`: a client to
 * follow them with (default a new one with default options), e.g. one that has already learned.
 */
export async function followWithFlowstream(world: World, assignment: Assignment, output: OutputMode, runs: Runs = world.flowstream()): Promise<Outcome> {
  const { time } = world;
  const { sightings } = assignment;
  const one = (item: number): Promise<boolean> =>
    lastValueFrom(
      runs.run(canvasOf(assignment, item), { variables: variablesOf((assignment.firstItem ?? 0) + item) }, { output, timeoutMs: assignment.deadlineMs }).pipe(
        tap((event) => {
          const now = time.now();
          switch (event.type) {
            case 'started':
            case 'status':
              sightings.see(event.executionId, now, { status: event.status });
              break;
            case 'node':
              sightings.see(event.executionId, now, { nodes: [{ nodeId: event.nodeId, status: event.status }] });
              break;
            case 'finished':
              sightings.see(event.executionId, now, { status: event.result.status });
              break;
            case 'message':
            case 'file':
            case 'connection':
            case 'snapshot': // only a late subscriber of a shared run gets one; each run here has one subscriber
              break;
          }
        }),
        filter((event) => event.type === 'finished'),
        map((event) => event.result.status === 'finish'),
        // A run that errors (its deadline passed) is not completed.
        catchError(() => of(false)),
      ),
      { defaultValue: false },
    );
  const finished = await Promise.all(Array.from({ length: assignment.runs }, (_, item) => one(item)));
  const completed = finished.filter(Boolean).length;
  return { completed, completedWithoutError: completed };
}

/**
 * The baseline: what users do today, modelled on the service's own tool (service.md §6) — start, then
 * read the status every `periodMs`, no budget, no backoff; at the end one output read for the result.
 * A failed request (a 429 above all) is a failed tick: the loop tries again at the next tick, so that
 * the loop's latency and its 429s are measured over the whole run. `completedWithoutError` counts the
 * runs the service's tool itself would have completed: it ends the watch at the first error.
 * A loop stops at the deadline, or when the account's daily quota is gone (a 429 with no daily
 * requests left: nothing can succeed for 24 h, longer than any execution lives, service.md §2.1, §3.6).
 */
export async function followWithFixedLoop(world: World, assignment: Assignment, periodMs: number): Promise<Outcome> {
  const http = world.plain();
  const { time } = world;
  const { sightings } = assignment;
  const deadlineAt = time.now() + assignment.deadlineMs;

  const one = async (item: number): Promise<{ completed: boolean; clean: boolean }> => {
    let clean = true;
    /** Runs one request of the loop; `undefined` when it failed. Throws `Stop` when the loop must end. */
    const attempt = async <T>(request: () => Promise<T>): Promise<T | undefined> => {
      if (time.now() > deadlineAt) throw new Stop();
      try {
        return await request();
      } catch (error) {
        clean = false;
        if (isRateLimitError(error) && error.rateLimit.remainingPerDay === 0) throw new Stop();
        return undefined;
      }
    };
    try {
      let executionId: string | undefined;
      while (executionId === undefined) {
        executionId = (await attempt(() => http.executions.start(canvasOf(assignment, item), { variables: variablesOf((assignment.firstItem ?? 0) + item) })))?.executionId;
        if (executionId === undefined) await time.sleep(periodMs);
      }
      const id = executionId;
      for (;;) {
        await time.sleep(periodMs);
        const snapshot = await attempt(() => http.executions.status(id));
        if (snapshot === undefined) continue;
        sightings.see(id, time.now(), snapshot);
        if (snapshot.status === 'finish' || snapshot.status === 'failed') break;
      }
      while ((await attempt(() => http.executions.output(id))) === undefined) await time.sleep(periodMs);
      return { completed: true, clean };
    } catch (error) {
      if (error instanceof Stop) return { completed: false, clean: false };
      throw error;
    }
  };

  const results = await Promise.all(Array.from({ length: assignment.runs }, (_, item) => one(item)));
  return {
    completed: results.filter((result) => result.completed).length,
    completedWithoutError: results.filter((result) => result.completed && result.clean).length,
  };
}

class Stop extends Error {}

/** One way of following runs, as every scenario compares them. */
export interface Contender {
  readonly name: string;
  /** A fixed loop's period; flowstream has none (its demand is bounded by its budget). */
  readonly periodMs?: number;
  follow(world: World, assignment: Assignment): Promise<Outcome>;
}

export const FLOWSTREAM_STREAM: Contender = { name: 'flowstream (stream)', follow: (world, assignment) => followWithFlowstream(world, assignment, 'stream') };
export const FLOWSTREAM_FINAL: Contender = { name: 'flowstream (final)', follow: (world, assignment) => followWithFlowstream(world, assignment, 'final') };
/** The service's own tool (service.md §6): the baseline every ratio is taken against. */
export const LOOP_2S: Contender = { name: 'fixed 2 s loop', periodMs: 2000, follow: (world, assignment) => followWithFixedLoop(world, assignment, 2000) };
export const LOOP_1S: Contender = { name: 'fixed 1 s loop', periodMs: 1000, follow: (world, assignment) => followWithFixedLoop(world, assignment, 1000) };
