import fc from 'fast-check';
import { tap } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ExecutionStatus, NodeStatus } from '../../src/domain/model.js';
import { runsOver } from '../../src/runs/runs.js';
import type { RunEvent } from '../../src/runs/events.js';
import { readingOf, type RunReading } from '../../src/runs/run-state.js';
import { CANVAS_ID, message, node, output, outputNode, scriptedSource, snapshot, started, testScheduler } from './fixtures.js';
import { defaults, executionAt, life, statusAt } from './task-lives.js';


describe("a run's readings", () => {
  it('number 1, 2, 3…, carry exactly the events of the run, and each state is the read that made it: never a mix of two, the last the freshest', () => {
    fc.assert(
      fc.property(
        fc.array(life, { minLength: 1, maxLength: 5 }),
        fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 40, maxLength: 40 }),
        fc.constantFrom('stream' as const, 'final' as const),
        fc.constantFrom('leave' as const, 'follow' as const),
        (tasks, advances, mode, onFailedBranches) => {
          const ids = tasks.map((_, index) => `t${index}`);
          // Each read finds the service a few steps further on (0 to 2), whatever its endpoint.
          let step = 0;
          let reads = 0;
          const next = (): readonly NodeStatus[] => {
            step += advances[reads % advances.length] ?? 1;
            reads += 1;
            return tasks.map((task) => statusAt(task, step));
          };
          // What the service showed at its latest read, of the nodes and of the execution.
          let latest: readonly NodeStatus[] | undefined;
          let latestExecution: ExecutionStatus | undefined;
          const events: RunEvent[] = [];
          const readings: RunReading[] = [];
          const broken: string[] = [];
          testScheduler().run(({ cold, flush }) => {
            const source = scriptedSource({
              start: () => cold('-(s|)', { s: started() }),
              status: () => {
                const statuses = next();
                const execution = executionAt(statuses);
                return cold('-(a|)', { a: snapshot(execution, [node('start', 'finish'), ...statuses.map((status, index) => node(ids[index]!, status))]) }).pipe(
                  tap(() => {
                    latest = statuses;
                    latestExecution = execution;
                  }),
                );
              },
              output: () => {
                const statuses = next();
                const nodes = statuses.map((status, index) => outputNode(ids[index]!, status, status === 'init' ? [] : [message(`m${index}`, `text at ${status}`)]));
                return cold('-(o|)', { o: output(nodes) }).pipe(
                  tap(() => {
                    latest = statuses;
                  }),
                );
              },
            });
            runsOver(source, defaults)
              .run(CANVAS_ID, {}, { failOnWorkflowError: false, output: mode, onFailedBranches })
              .subscribe((event) => {
                events.push(event);
                const reading = readingOf(event);
                if (reading === undefined) {
                  broken.push(`${event.type} without a reading`);
                  return;
                }
                if (event !== reading.events.at(-1)) return;
                readings.push(reading);
                // The state as the read that made it showed the run (the `started` reading has no read yet).
                if (latest === undefined) return;
                const shown = ids.map((id) => reading.state.nodes.find((entry) => entry.nodeId === id)?.status);
                if (shown.join() !== latest.join()) broken.push(`reading ${reading.seq} shows ${shown.join()} after a read of ${latest.join()}`);
                if (reading.state.status !== latestExecution && reading.state.result === undefined) broken.push(`reading ${reading.seq} says ${String(reading.state.status)}, the read ${String(latestExecution)}`);
              });
            flush();
          });
          expect(broken).toEqual([]);
          expect(readings.map((reading) => reading.seq)).toEqual(readings.map((_, index) => index + 1));
          expect(readings.flatMap((reading) => reading.events)).toEqual(events);
          const last = readings.at(-1);
          expect(events.at(-1)?.type).toBe('finished');
          // The end follows the freshest read, in the state and in the result.
          expect(ids.map((id) => last?.state.nodes.find((entry) => entry.nodeId === id)?.status)).toEqual(latest);
          expect(ids.map((id) => last?.state.result?.nodes.find((entry) => entry.nodeId === id)?.status)).toEqual(latest);
        },
      ),
      { numRuns: 200 },
    );
  });
});
