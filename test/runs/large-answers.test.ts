import { from, lastValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { NodeExecution, OutputFile, OutputMessage, OutputNode, RunResult } from '../../src/domain/model.js';
import type { RunEvent } from '../../src/runs/events.js';
import { diffOutput, type ExecutionView, initialView, messageKey, type MessageView, runResultOf } from '../../src/runs/execution-view.js';
import { shareRun } from '../../src/runs/run-hub.js';
import { toRunState } from '../../src/runs/run-state.js';
import { EXECUTION_ID, message, output } from './fixtures.js';

// One answer of many files or nodes is worked through in one go, and every run of the process waits
// meanwhile: the work must grow with the answer, not with its square. Proven by counting how often the
// code reads the answer's objects (a scan of every known item per item reads them n² times), not by
// timing it.

const N = 2_000;
/** Reads allowed per item of the answer: linear code reads each item a few times; quadratic code, about N times. */
const READS_PER_ITEM = 40;

interface Reads {
  count: number;
}

/** `value` behind a proxy that counts every property read. */
function counted<T extends object>(value: T, reads: Reads): T {
  return new Proxy(value, {
    get(target, key, receiver) {
      reads.count += 1;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}

function file(index: number, signature: string): OutputFile {
  return { name: `part-${index}.csv`, type: 'text/csv', size: 100 + index, nodeId: `n${index % 7}`, url: `http://127.0.0.1/v1/drive/file/public/df-${index}/part-${index}.csv?sig=${signature}` };
}

function node(index: number): NodeExecution {
  return { nodeId: `n${index}`, status: 'finish', rawStatus: 'finish', title: `Step ${index}` };
}

describe('an answer of many files or nodes costs work in proportion to its size', () => {
  it(`matches ${N.toLocaleString('en')} files of one output answer, and of the next one at new links, in O(n)`, () => {
    const reads: Reads = { count: 0 };
    const answer = (signature: string) => output([], Array.from({ length: N }, (_, index) => counted(file(index, signature), reads)));
    const first = diffOutput(initialView(EXECUTION_ID, 'executing'), answer('a'));
    expect(first.events).toHaveLength(N);
    expect(reads.count).toBeLessThan(N * READS_PER_ITEM);
    const second = diffOutput(first.view, answer('b'));
    expect(second.events).toHaveLength(0);
    expect(second.view.files).toHaveLength(N);
    expect(reads.count).toBeLessThan(2 * N * READS_PER_ITEM);
  });

  it(`builds the result of ${N.toLocaleString('en')} task nodes and their messages in O(n)`, () => {
    const reads: Reads = { count: 0 };
    const messages = new Map<string, MessageView>();
    const outputNodes: OutputNode[] = [];
    for (let index = 0; index < N; index += 1) {
      const { nodeId } = node(index);
      const said: OutputMessage = message(`am-${index}`, `Answer ${index}`);
      messages.set(messageKey(nodeId, said.messageId), counted({ nodeId, message: said }, reads));
      outputNodes.push(counted({ ...node(index), messages: [] }, reads));
    }
    const view: ExecutionView = { ...initialView(EXECUTION_ID, 'finish'), nodes: new Map(outputNodes.map((entry) => [entry.nodeId, node(Number(entry.nodeId.slice(1)))])), messages, outputNodes };
    const result = runResultOf(view, 'finish');
    expect(result.output).toHaveLength(N);
    expect(result.output[N - 1]?.messages.map((entry) => entry.content)).toEqual([`Answer ${N - 1}`]);
    expect(reads.count).toBeLessThan(2 * N * READS_PER_ITEM);
  });

  it(`folds one poll of ${N.toLocaleString('en')} nodes with their messages into a state in O(n), shared or not`, async () => {
    const reads: Reads = { count: 0 };
    const output = Array.from({ length: N }, (_, index) => counted<OutputNode>({ ...node(index), messages: [], startTime: '2026-01-01T00:00:00Z', endTime: '2026-01-01T00:00:01Z' }, reads));
    const result: RunResult = { executionId: EXECUTION_ID, status: 'finish', endedBy: 'finish', nodes: [], output, files: [], failedNodes: [], runningNodes: [] };
    const events: RunEvent[] = [
      { type: 'started', executionId: EXECUTION_ID, status: 'executing' },
      ...Array.from({ length: N }, (_, index): RunEvent => counted({ type: 'node', executionId: EXECUTION_ID, nodeId: `n${index}`, status: 'executing' }, reads)),
      ...Array.from({ length: N }, (_, index): RunEvent =>
        counted({ type: 'message', executionId: EXECUTION_ID, nodeId: `n${index}`, messageId: `am-${index}`, role: 'ai', delta: 'Hi', reasoningDelta: '', content: 'Hi', reasoningContent: '', replaced: false }, reads),
      ),
      { type: 'finished', executionId: EXECUTION_ID, result },
    ];
    const state = await lastValueFrom(from(events).pipe(shareRun(), toRunState()));
    expect(state.progress).toEqual({ succeeded: 0, failed: 0, done: 0, total: N });
    expect(state.nodes[N - 1]).toMatchObject({ nodeId: `n${N - 1}`, text: 'Hi', elapsedMs: 1_000 });
    expect(reads.count).toBeLessThan(3 * N * READS_PER_ITEM);
  });
});
