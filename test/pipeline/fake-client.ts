import type { Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { expect } from 'vitest';
import type { OutputFile, RunResult, UploadedFile } from '../../src/domain/model.js';
import type { PipelineClient } from '../../src/pipeline/pipeline-client.js';
import type { RunInput } from '../../src/runs/runs.js';
import type { RunEvent } from '../../src/runs/events.js';
import type { RunOptions } from '../../src/runs/run-lifecycle.js';

export function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => {
    expect(actual).toEqual(expected);
  });
}

/** A run's result: one task node whose last AI message is `text`. */
export function resultOf(executionId: string, options: { readonly status?: RunResult['status']; readonly text?: string; readonly files?: readonly OutputFile[] } = {}): RunResult {
  const status = options.status ?? 'finish';
  const node = { nodeId: 'node-task', status, rawStatus: status } as const;
  return {
    executionId,
    status,
    endedBy: status,
    nodes: [node],
    output: [{ ...node, messages: options.text === undefined ? [] : [{ messageId: `am-${executionId}`, type: 'ai', rawType: 'ai', content: options.text, reasoningContent: '' }] }],
    files: options.files ?? [],
    failedNodes: status === 'failed' ? [node] : [],
    runningNodes: [],
  };
}

export const startedEvent = (executionId: string): RunEvent => ({ type: 'started', executionId, status: 'executing' });
export const finishedEvent = (result: RunResult): RunEvent => ({ type: 'finished', executionId: result.executionId, result });

/** One call the fake client received. */
export interface Call {
  readonly kind: 'run' | 'watch';
  readonly target: string;
  readonly input?: RunInput;
  readonly options?: RunOptions;
}

/** A client whose runs and watches are whatever `script` returns; it records every call. */
export function fakeClient(script: {
  readonly run?: (canvasId: string, input: RunInput, call: number) => Observable<RunEvent>;
  readonly watch?: (executionId: string) => Observable<RunEvent>;
  readonly upload?: (names: readonly string[]) => Promise<UploadedFile[]>;
}): PipelineClient & { readonly calls: Call[] } {
  const calls: Call[] = [];
  return {
    calls,
    run: (canvasId: string, input: RunInput = {}, options?: RunOptions) => {
      calls.push({ kind: 'run', target: canvasId, input, ...(options === undefined ? {} : { options }) });
      if (script.run === undefined) throw new Error('unexpected run');
      return script.run(canvasId, input, calls.filter((call) => call.kind === 'run').length - 1);
    },
    watch: (executionId, options) => {
      calls.push({ kind: 'watch', target: executionId, ...(options === undefined ? {} : { options }) });
      if (script.watch === undefined) throw new Error('unexpected watch');
      return script.watch(executionId);
    },
    files: {
      upload: (files) => {
        if (script.upload === undefined) throw new Error('unexpected upload');
        return script.upload(files.map((file) => ('name' in file ? file.name : 'blob')));
      },
    },
  };
}
