import { concat, defer, EMPTY, expand, map, merge, mergeMap, Observable, of, type SchedulerLike, Subject, switchMap, take, timer } from 'rxjs';
import type { ExecutionSnapshot, ExecutionStatus, Logger } from '../domain/model.js';
import { type CadenceBounds, type CadenceState, nextCadence, type Reading, SETTLING_WINDOW_MS, startCadence } from './cadence.js';
import type { RunEvent } from './events.js';
import type { ExecutionSource } from './execution-source.js';
import { type ExecutionView, initialView } from './execution-view.js';
import { isNodeDone } from './node-progress.js';
import { announceHeldFiles, diffOutput } from './output-diff.js';
import { type OutputMode, shouldReadOutput, shouldReadOutputAlone } from './output-policy.js';
import { runResultOf } from './run-result-of.js';
import { diffNodeStatuses, diffStatus } from './status-diff.js';
import type { ViewDiff } from './view-diff.js';

export interface PollSettings {
  readonly executionId: string;
  readonly canvasId?: string | undefined;
  /**
   * The status the start answered. Without one (a `watch`), the first status read is announced as
   * the `started` event.
   */
  readonly startedStatus?: ExecutionStatus | undefined;
  readonly bounds: CadenceBounds;
  readonly output: OutputMode;
  readonly scheduler: SchedulerLike;
  readonly random: () => number;
  readonly logger?: Logger | undefined;
  /** Cuts the wait before the next read short with a status read: after an abort, the end is read at once. */
  readonly readNow?: Observable<void> | undefined;
  /** `'follow'`: a failed execution is read on until its last running branch ends (`RunOptions.onFailedBranches`). */
  readonly onFailedBranches?: 'leave' | 'abort' | 'follow';
}

/** Where the next read starts from. */
interface Position {
  readonly view: ExecutionView;
  readonly cadence: CadenceState;
  readonly lastOutputAt: number | undefined;
  /** A node ended after the last output read (its last text and files are not read yet). */
  readonly outputBehind: boolean;
  /** When the reads first found every node done while the execution still ran. */
  readonly settlingSince: number | undefined;
  readonly waitMs: number;
}

/** Events to emit now; with `next` when this completes a read that is not the last. */
interface Step {
  readonly events: readonly RunEvent[];
  readonly next?: Position;
}

function isTerminal(status: ExecutionStatus | undefined): status is 'finish' | 'failed' {
  return status === 'finish' || status === 'failed';
}

/**
 * Follows one execution until it is terminal: reads its status on the adaptive cadence, its output
 * only when it can have changed, and emits the events of each read, ending with `finished`. Status
 * events go out as soon as the status answers, not after the slower output read (PROTOCOL §2.5).
 * Errors of the source pass through untouched; the caller decides what they mean.
 */
export function pollExecution(source: ExecutionSource, settings: PollSettings): Observable<RunEvent> {
  const { executionId, bounds, scheduler } = settings;

  const logged = (diff: ViewDiff): ViewDiff => {
    for (const warning of diff.warnings) settings.logger?.warn(warning.message, warning.meta);
    return diff;
  };

  const announce = (view: ExecutionView, snapshot: ExecutionSnapshot): { view: ExecutionView; events: RunEvent[] } =>
    view.status === undefined
      ? { view: { ...view, status: snapshot.status }, events: [{ type: 'started', executionId, status: snapshot.status }] }
      : { view, events: [] };

  /**
   * The step after a read that ended with `diff` at `now`: `finished` when the execution is terminal,
   * otherwise the events and where the next read starts. `changed` says a status moved, which sets the
   * cadence back to its fastest: a new message says the node is busy, not that its status will change
   * soon, and the output has its own spacing (PROTOCOL §4.4).
   */
  const conclude = (previous: Position, diff: ViewDiff, read: { now: number; changed: boolean; output: boolean; nodeEnded: boolean }): Step => {
    const { view } = diff;
    // PROTOCOL §3.3: a failed execution's other branches may still run; `follow` reads on until they end.
    const branchesRunning = view.status === 'failed' && [...view.nodes.values()].some((node) => node.status === 'executing' || node.status === 'waiting');
    if (isTerminal(view.status) && !(settings.onFailedBranches === 'follow' && branchesRunning)) {
      const last = announceHeldFiles(view);
      const result = runResultOf(last.view, view.status, settings.canvasId);
      return { events: [...diff.events, ...last.events, { type: 'finished', executionId, result }] };
    }
    // PROTOCOL §3.3: every node done while the execution still says `executing` means the
    // next server tick ends it; read again soon rather than declare the end ourselves.
    const nodes = [...view.nodes.values()];
    const allDone = nodes.length > 0 && nodes.every((node) => isNodeDone(node.status));
    const settlingSince = allDone ? (previous.settlingSince ?? read.now) : undefined;
    const settling = settlingSince !== undefined && read.now - settlingSince < SETTLING_WINDOW_MS;
    const reading: Reading = read.changed ? 'changed' : settling ? 'settling' : 'quiet';
    const cadence = nextCadence(bounds, previous.cadence, reading, settings.random);
    const lastOutputAt = read.output ? read.now : previous.lastOutputAt;
    const outputBehind = !read.output && (previous.outputBehind || read.nodeEnded);
    return { events: diff.events, next: { view, cadence: cadence.state, lastOutputAt, outputBehind, settlingSince, waitMs: cadence.waitMs } };
  };

  const sinceLastOutput = (position: Position, now: number): number | undefined =>
    position.lastOutputAt === undefined ? undefined : now - position.lastOutputAt;

  /** The status, then the output when it can have changed. Status events go out before the slower output read. */
  const readStatus = (previous: Position): Observable<Step> =>
    source.status(executionId).pipe(
      switchMap((snapshot) => {
        const started = announce(previous.view, snapshot);
        const status = logged(diffStatus(started.view, snapshot));
        const statusEvents = [...started.events, ...status.events];
        const now = scheduler.now();
        const readOutput = shouldReadOutput({
          mode: settings.output,
          terminal: isTerminal(status.view.status),
          nodes: [...status.view.nodes.values()].map((node) => node.status),
          sinceLastOutputMs: sinceLastOutput(previous, now),
        });
        const nodeEnded = status.events.some((event) => event.type === 'node' && isNodeDone(event.status));
        const read = { now, changed: statusEvents.length > 0, output: readOutput, nodeEnded };
        if (!readOutput) return of(conclude(previous, { ...status, events: statusEvents }, read));
        return concat(
          of<Step>({ events: statusEvents }),
          source.output(executionId).pipe(map((output) => conclude(previous, logged(diffOutput(status.view, output)), read))),
        );
      }),
    );

  /** The output alone, its task nodes standing in for the status read (see `shouldReadOutputAlone`). */
  const readOutputAlone = (previous: Position): Observable<Step> =>
    source.output(executionId).pipe(
      map((output) => {
        const moved = logged(diffNodeStatuses(previous.view, output.output));
        const text = logged(diffOutput(moved.view, output));
        const diff = { ...text, events: [...moved.events, ...text.events] };
        return conclude(previous, diff, { now: scheduler.now(), changed: moved.events.length > 0, output: true, nodeEnded: false });
      }),
    );

  const read = (previous: Position): Observable<Step> =>
    shouldReadOutputAlone({
      mode: settings.output,
      nodes: [...previous.view.nodes.values()].map((node) => node.status),
      sinceLastOutputMs: sinceLastOutput(previous, scheduler.now()),
      nodeEndedSinceOutput: previous.outputBehind,
    })
      ? readOutputAlone(previous)
      : readStatus(previous);

  const first: Position = {
    view: initialView(executionId, settings.startedStatus),
    cadence: startCadence(bounds),
    lastOutputAt: undefined,
    outputBehind: false,
    settlingSince: undefined,
    // A fresh start has just told us its status: the first read waits one fast interval. A watch reads at once.
    waitMs: settings.startedStatus === undefined ? 0 : bounds.minMs,
  };

  /** Reads on the cadence; a poke (`readNow`) ends the wait at once and makes the next read the status. */
  const follow = (pokes: Pokes | undefined): Observable<RunEvent> =>
    of<Step>({ events: [], next: first }).pipe(
      expand(({ next }) => {
        if (next === undefined) return EMPTY;
        const waited = pokes === undefined ? timer(next.waitMs, scheduler) : merge(timer(next.waitMs, scheduler), pokes.wake).pipe(take(1));
        return waited.pipe(switchMap(() => (pokes?.take() === true ? readStatus(next) : read(next))));
      }),
      mergeMap((step) => step.events),
    );

  const { readNow } = settings;
  if (readNow === undefined) return follow(undefined);
  return new Observable<RunEvent>((subscriber) => {
    // A poke that comes during a read still counts: the wait after that read is skipped.
    let poked = false;
    const woken = new Subject<void>();
    const listening = readNow.subscribe(() => {
      poked = true;
      woken.next();
    });
    const pokes: Pokes = {
      wake: defer(() => (poked ? of(undefined) : woken)),
      take: () => {
        const was = poked;
        poked = false;
        return was;
      },
    };
    const following = follow(pokes).subscribe(subscriber);
    return () => {
      listening.unsubscribe();
      following.unsubscribe();
    };
  });
}

/** Pokes not acted on yet: `wake` ends a wait, `take` says (once) whether one came. */
interface Pokes {
  readonly wake: Observable<unknown>;
  take(): boolean;
}
