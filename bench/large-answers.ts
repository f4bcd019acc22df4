/**
 * Large answers: how long one output or status answer of many files or nodes holds the event loop
 * (every run of the process waits meanwhile), and a run handle following a workflow of many nodes.
 * The answers are as large as the service can send under the client's 8 MiB body cap (50,000 files
 * is about 3.8 MB of JSON). Everything here is synchronous work on parsed answers, so its wall time
 * is the event loop's block; the handle's row is the longest single block (event-loop delay max) and
 * the CPU of the whole run.
 *
 *     npx tsx bench/large-answers.ts      (about 10 s; writes bench/results/large-answers.json)
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { of } from 'rxjs';
import type { ExecutionOutput, ExecutionSnapshot, NodeExecution, NodeStatus, OutputFile, OutputNode } from '../src/domain/model.js';
import { diffOutput, diffStatus, initialView, runResultOf } from '../src/runs/execution-view.js';
import type { ExecutionSource } from '../src/runs/run-lifecycle.js';
import { runsOver } from '../src/runs/runs.js';
import { table, writeResults } from './harness/report.js';

const EXECUTION_ID = 'we-aaaaaaaaaaaaaaaaaaaaaaaa';

export interface LargeAnswersOptions {
  /** Files listed in one output answer. */
  readonly files?: readonly number[];
  /** Task nodes in one status and output answer, each with one message. */
  readonly nodes?: readonly number[];
  /** Nodes of the workflow a run handle follows. */
  readonly handleNodes?: readonly number[];
}

export interface FilesRow {
  readonly files: number;
  /** JSON size of the answer, bytes. */
  readonly answerBytes: number;
  /** The first answer listing them, ms. */
  readonly firstReadMs: number;
  /** The next answer, every link signed anew, ms. */
  readonly resignedReadMs: number;
  /** `file` events of both answers together: one per file when a file is known by more than its link. */
  readonly fileEvents: number;
}

export interface NodesRow {
  readonly nodes: number;
  /** The status answer, then the output answer, then the result built, ms. */
  readonly statusMs: number;
  readonly outputMs: number;
  readonly resultMs: number;
}

export interface HandleRow {
  readonly nodes: number;
  /** The longest the event loop was held at once while the handle followed the run, ms. */
  readonly longestBlockMs: number;
  /** CPU of the whole run, from `startRun` to its result, ms. */
  readonly cpuMs: number;
}

const cpuMs = (): number => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

function timed<T>(work: () => T): { readonly value: T; readonly ms: number } {
  const began = performance.now();
  const value = work();
  return { value, ms: performance.now() - began };
}

function file(index: number, signature: string): OutputFile {
  return { name: `part-${index}.csv`, type: 'text/csv', size: 1_000 + index, nodeId: `node-${index % 50}`, url: `https://files.example/v1/drive/file/public/df-${index}/part-${index}.csv?sig=${signature}` };
}

function node(index: number, status: NodeStatus): NodeExecution {
  return { nodeId: `node-${index}`, status, rawStatus: status, title: `Step ${index}` };
}

function outputNode(index: number, status: NodeStatus): OutputNode {
  return { ...node(index, status), messages: [{ messageId: `am-${index}`, type: 'ai', rawType: 'ai', content: `Answer of step ${index}.`, reasoningContent: '' }] };
}

export function filesRow(files: number): FilesRow {
  const answer = (signature: string): ExecutionOutput => ({ output: [], files: Array.from({ length: files }, (_, index) => file(index, signature)) });
  const first = answer('a');
  const resigned = answer('b');
  const one = timed(() => diffOutput(initialView(EXECUTION_ID, 'executing'), first));
  const two = timed(() => diffOutput(one.value.view, resigned));
  return {
    files,
    answerBytes: JSON.stringify(first).length,
    firstReadMs: one.ms,
    resignedReadMs: two.ms,
    fileEvents: one.value.events.length + two.value.events.length,
  };
}

export function nodesRow(nodes: number): NodesRow {
  const snapshot: ExecutionSnapshot = { executionId: EXECUTION_ID, status: 'finish', rawStatus: 'finish', nodes: Array.from({ length: nodes }, (_, index) => node(index, 'finish')) };
  const output: ExecutionOutput = { output: Array.from({ length: nodes }, (_, index) => outputNode(index, 'finish')), files: [] };
  const status = timed(() => diffStatus(initialView(EXECUTION_ID, 'executing'), snapshot));
  const read = timed(() => diffOutput(status.value.view, output));
  const result = timed(() => runResultOf(read.value.view, 'finish'));
  return { nodes, statusMs: status.ms, outputMs: read.ms, resultMs: result.ms };
}

/** A source answering at once: the workflow's nodes executing on the first status read, all finished on the next. */
function sourceOf(nodes: number): ExecutionSource {
  let reads = 0;
  const snapshot = (status: NodeStatus): ExecutionSnapshot => ({
    executionId: EXECUTION_ID,
    status: status === 'finish' ? 'finish' : 'executing',
    rawStatus: status,
    nodes: Array.from({ length: nodes }, (_, index) => node(index, status)),
  });
  return {
    start: () => of({ type: 'started' as const, execution: { executionId: EXECUTION_ID, status: 'executing' as const, rawStatus: 'running' } }),
    status: () => of(snapshot(reads++ === 0 ? 'executing' : 'finish')),
    output: () => of({ output: Array.from({ length: nodes }, (_, index) => outputNode(index, 'finish')), files: [] }),
    abort: () => of(undefined),
  };
}

export async function handleRow(nodes: number): Promise<HandleRow> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const began = cpuMs();
  const handle = runsOver(sourceOf(nodes), { polling: { minMs: 1, maxMs: 5 } }).startRun('c-1', {}, { output: 'final' });
  await handle.result;
  const cpu = cpuMs() - began;
  histogram.disable();
  return { nodes, longestBlockMs: histogram.max / 1e6, cpuMs: cpu };
}

export async function largeAnswers(options: LargeAnswersOptions = {}): Promise<{ files: FilesRow[]; nodes: NodesRow[]; handles: HandleRow[] }> {
  const files = (options.files ?? [5_000, 50_000]).map(filesRow);
  const nodes = (options.nodes ?? [10_000, 100_000]).map(nodesRow);
  const handles: HandleRow[] = [];
  for (const size of options.handleNodes ?? [2_000, 20_000]) handles.push(await handleRow(size));
  return { files, nodes, handles };
}

export function largeAnswersTable(results: Awaited<ReturnType<typeof largeAnswers>>): string {
  const ms = (value: number): string => value.toFixed(1);
  return [
    table(
      ['files in one output answer', 'answer (MB)', 'first read (ms)', 're-signed read (ms)', 'file events'],
      results.files.map((row) => [row.files.toLocaleString('en'), (row.answerBytes / 1e6).toFixed(1), ms(row.firstReadMs), ms(row.resignedReadMs), row.fileEvents.toLocaleString('en')]),
    ),
    table(
      ['nodes in one answer', 'status read (ms)', 'output read (ms)', 'result built (ms)'],
      results.nodes.map((row) => [row.nodes.toLocaleString('en'), ms(row.statusMs), ms(row.outputMs), ms(row.resultMs)]),
    ),
    table(
      ['startRun on nodes', 'longest block (ms)', 'CPU of the run (ms)'],
      results.handles.map((row) => [row.nodes.toLocaleString('en'), ms(row.longestBlockMs), ms(row.cpuMs)]),
    ),
  ].join('\n\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const results = await largeAnswers();
  console.log(largeAnswersTable(results));
  console.log(`→ ${await writeResults('large-answers', results)}`);
}
