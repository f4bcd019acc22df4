import fc from 'fast-check';
import { share } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { NodeStatus } from '../../src/domain/model.js';
import { runsOver } from '../../src/runs/runs.js';
import type { RunEvent } from '../../src/runs/events.js';
import { type RunState, toRunState } from '../../src/runs/run-state.js';
import { CANVAS_ID, node, output, outputNode, scriptedSource, snapshot, started, testScheduler } from './fixtures.js';
import { defaults, executionAt, life, statusAt } from './task-lives.js';


describe('what a run shows of its nodes', () => {
  it('is always a status the service showed, and at the end the freshest one read', () => {
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
          const shown = new Map<string, Set<NodeStatus>>(ids.map((id) => [id, new Set<NodeStatus>()]));
          const latest = new Map<string, NodeStatus>();
          const show = (statuses: readonly NodeStatus[]): void => {
            statuses.forEach((status, index) => {
              shown.get(ids[index]!)?.add(status);
              latest.set(ids[index]!, status);
            });
          };
          const events: RunEvent[] = [];
          const states: RunState[] = [];
          testScheduler().run(({ cold, flush }) => {
            const source = scriptedSource({
              start: () => cold('-(s|)', { s: started() }),
              status: () => {
                const statuses = next();
                show(statuses);
                return cold('-(a|)', { a: snapshot(executionAt(statuses), [node('start', 'finish'), ...statuses.map((status, index) => node(ids[index]!, status))]) });
              },
              output: () => {
                const statuses = next();
                show(statuses);
                return cold('-(o|)', { o: output(statuses.map((status, index) => outputNode(ids[index]!, status))) });
              },
            });
            const run$ = runsOver(source, defaults).run(CANVAS_ID, {}, { failOnWorkflowError: false, output: mode, onFailedBranches }).pipe(share());
            run$.subscribe((event) => events.push(event));
            run$.pipe(toRunState()).subscribe((state) => states.push(state));
            flush();
          });
          for (const state of states) {
            for (const entry of state.nodes) if (entry.nodeId !== 'start') expect(shown.get(entry.nodeId)?.has(entry.status)).toBe(true);
          }
          const finished = events.at(-1);
          if (finished?.type !== 'finished') throw new Error('the run did not finish');
          const last = states.at(-1);
          for (const id of ids) {
            expect(last?.nodes.find((entry) => entry.nodeId === id)?.status).toBe(latest.get(id));
            expect(finished.result.nodes.find((entry) => entry.nodeId === id)?.status).toBe(latest.get(id));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
