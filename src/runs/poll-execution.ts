import { EMPTY, expand, map, mergeMap, type Observable, of, type SchedulerLike, switchMap, timer } from 'rxjs';
import type { ExecutionSnapshot, ExecutionStatus, Logger } from '../http/model.js';
import { type CadenceBounds, type CadenceState, nextCadence, type Reading, startCadence } from './cadence.js';
import type { NodeEvent, RunEvent } from './events.js';
import type { ExecutionSource } from './execution-source.js';
import { type ExecutionView, initialView } from './execution-view.js';
import { isNodeDone } from './node-progress.js';
import { diffOutput } from './output-diff.js';
import { type OutputMode, shouldReadOutput } from './output-policy.js';
import { runResultOf } from './run-result-of.js';
import { diffStatus } from './status-diff.js';
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
}

/** One read of the execution: what it emitted and what the next one starts from. */
interface Step {
  readonly view: ExecutionView;
  readonly cadence: CadenceState;
  readonly lastOutputAt: number | undefined;
  readonly events: readonly RunEvent[];
  /** The wait before the next read; `undefined` once the run is over. */
  readonly waitMs: number | undefined;
}

function isTerminal(status: ExecutionStatus | undefined): status is 'finish' | 'failed' {
  return status === 'finish' || status === 'failed';
}

/**
 * Follows one execution until it is terminal: reads its status on the adaptive cadence, its output
 * only when it can have changed, and emits the events of each read, ending with `finished`. Errors of
 * the source pass through untouched; the caller decides what they mean.
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

  const read = (previous: Step): Observable<Step> =>
    source.status(executionId).pipe(
      switchMap((snapshot) => {
        const started = announce(previous.view, snapshot);
        const status = logged(diffStatus(started.view, snapshot));
        const terminal = isTerminal(status.view.status);
        const nodes = [...status.view.nodes.values()];
        const now = scheduler.now();
        const readOutput = shouldReadOutput({
          mode: settings.output,
          terminal,
          nodeEvents: status.events.filter((event): event is NodeEvent => event.type === 'node'),
          executing: nodes.some((node) => node.status === 'executing'),
          sinceLastOutputMs: previous.lastOutputAt === undefined ? undefined : now - previous.lastOutputAt,
        });
        const output$: Observable<ViewDiff | undefined> = readOutput
          ? source.output(executionId).pipe(map((output) => logged(diffOutput(status.view, output))))
          : of(undefined);
        return output$.pipe(
          map((output): Step => {
            const view = output?.view ?? status.view;
            const events = [...started.events, ...status.events, ...(output?.events ?? [])];
            const lastOutputAt = readOutput ? now : previous.lastOutputAt;
            if (isTerminal(view.status)) {
              const result = runResultOf(view, view.status, settings.canvasId);
              return { view, cadence: previous.cadence, lastOutputAt, events: [...events, { type: 'finished', executionId, result }], waitMs: undefined };
            }
            // PROTOCOL §3.3: every node done while the execution still says `executing` means the
            // next server tick ends it; read again soon rather than declare the end ourselves.
            const settling = nodes.length > 0 && nodes.every((node) => isNodeDone(node.status));
            const reading: Reading = events.length > 0 ? 'changed' : settling ? 'settling' : 'quiet';
            const next = nextCadence(bounds, previous.cadence, reading, settings.random);
            return { view, cadence: next.state, lastOutputAt, events, waitMs: next.waitMs };
          }),
        );
      }),
    );

  const first: Step = {
    view: initialView(executionId, settings.startedStatus),
    cadence: startCadence(bounds),
    lastOutputAt: undefined,
    events: [],
    // A fresh start has just told us its status: the first read waits one fast interval. A watch reads at once.
    waitMs: settings.startedStatus === undefined ? 0 : bounds.minMs,
  };

  return of(first).pipe(
    expand((step) => (step.waitMs === undefined ? EMPTY : timer(step.waitMs, scheduler).pipe(switchMap(() => read(step))))),
    mergeMap((step) => step.events),
  );
}
