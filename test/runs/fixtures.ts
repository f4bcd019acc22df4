import { concat, map, type Observable, of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { expect } from 'vitest';
import type { ExecutionOutput, ExecutionSnapshot, ExecutionStatus, NodeExecution, NodeStatus, OutputFile, OutputMessage, OutputNode, StartedExecution } from '../../src/domain/model.js';
import type { ExecutionSource, StartProgress } from '../../src/runs/run-lifecycle.js';

export const EXECUTION_ID = 'we-aaaaaaaaaaaaaaaaaaaaaaaa';
export const CANVAS_ID = 'c-1';

export function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => {
    expect(actual).toEqual(expected);
  });
}

export function node(nodeId: string, status: NodeStatus, title = `Title ${nodeId}`): NodeExecution {
  return { nodeId, status, rawStatus: status, title };
}

export function snapshot(status: ExecutionStatus, nodes: readonly NodeExecution[] = []): ExecutionSnapshot {
  return { executionId: EXECUTION_ID, status, rawStatus: status, nodes };
}

export function started(status: ExecutionStatus = 'executing'): StartedExecution {
  return { executionId: EXECUTION_ID, status, rawStatus: status === 'executing' ? 'running' : status };
}

export function message(messageId: string, content: string, reasoningContent = ''): OutputMessage {
  return { messageId, type: 'ai', rawType: 'ai', content, reasoningContent };
}

export function outputNode(nodeId: string, status: NodeStatus, messages: readonly OutputMessage[] = []): OutputNode {
  return { nodeId, status, rawStatus: status, title: `Title ${nodeId}`, messages };
}

export function output(nodes: readonly OutputNode[] = [], files: readonly OutputFile[] = []): ExecutionOutput {
  return { output: nodes, files };
}

/** A start whose request leaves at once (`sending: true`, as an unbudgeted client sends it), answered by `answer`. */
export function sentStart(answer: Observable<StartedExecution>): Observable<StartProgress> {
  return concat(
    of<StartProgress>({ type: 'sending', sending: true }),
    answer.pipe(map((execution): StartProgress => ({ type: 'started', execution }))),
  );
}

/** A source whose every call is answered by a function of the call's index (0-based, per endpoint). */
export interface Script {
  readonly start?: () => Observable<StartedExecution>;
  readonly status?: (call: number) => Observable<ExecutionSnapshot>;
  readonly output?: (call: number) => Observable<ExecutionOutput>;
  readonly abort?: (call: number) => Observable<void>;
}

export interface ScriptedSource extends ExecutionSource {
  readonly calls: { start: number; status: number; output: number; abort: number };
}

function unscripted(endpoint: string): never {
  throw new Error(`unexpected ${endpoint} call`);
}

export function scriptedSource(script: Script): ScriptedSource {
  const calls = { start: 0, status: 0, output: 0, abort: 0 };
  return {
    calls,
    start: () => {
      calls.start += 1;
      return sentStart(script.start?.() ?? unscripted('start'));
    },
    status: () => script.status?.(calls.status++) ?? unscripted('status'),
    output: () => script.output?.(calls.output++) ?? unscripted('output'),
    abort: () => script.abort?.(calls.abort++) ?? unscripted('abort'),
  };
}
