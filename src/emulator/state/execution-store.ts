import { newDriveFileId, newExecutionId, newMessageId } from '../ids.js';
import { drawnWorkflow } from '../engine/drawn-workflow.js';
import type { Pacing, Timeline } from '../engine/timeline.js';
import { abortTimeline, planTimeline } from '../engine/timeline.js';
import type { Workflow } from '../workflows/workflow.js';
import type { ResolvedVariable } from './variables.js';

/** An output file of one execution, published under a drive file id (service.md §4.6). */
export interface ExecutionFile {
  readonly fileId: string;
  readonly nodeId: string;
  readonly name: string;
  readonly type: string;
  readonly bytes: Uint8Array<ArrayBuffer>;
}

/** One run of a workflow. The workflow is copied at run time: later edits do not affect it. */
export interface ExecutionRecord {
  readonly executionId: string;
  /** As this execution runs it: varying node durations drawn (`drawn-workflow.ts`). */
  readonly workflow: Workflow;
  readonly timeline: Timeline;
  readonly variables: readonly ResolvedVariable[];
  /** Message ids per node, one per scripted message. */
  readonly messageIds: ReadonlyMap<string, readonly string[]>;
  readonly files: readonly ExecutionFile[];
}

/** The executions of the emulator's account (service.md §3.8: any of them can be read). */
export class ExecutionStore {
  readonly #byId = new Map<string, ExecutionRecord>();
  /** Drive file id → execution id, for public downloads. */
  readonly #fileOwners = new Map<string, string>();
  /** Executions started per canvas: the next one's ordinal, which seeds its drawn durations. */
  readonly #startsPerCanvas = new Map<string, number>();
  readonly #pacing: Pacing;

  /** `pacing`: how executions move on, as the service does or as the spec reads (`timeline.ts`). */
  constructor(pacing: Pacing) {
    this.#pacing = pacing;
  }

  start(registered: Workflow, variables: readonly ResolvedVariable[], now: number): ExecutionRecord {
    const ordinal = this.#startsPerCanvas.get(registered.canvasId) ?? 0;
    this.#startsPerCanvas.set(registered.canvasId, ordinal + 1);
    const workflow = drawnWorkflow(registered, ordinal);
    const record: ExecutionRecord = {
      executionId: newExecutionId(),
      workflow,
      timeline: planTimeline(workflow, now, this.#pacing),
      variables,
      messageIds: new Map(workflow.nodes.map((node) => [node.id, node.messages.map(() => newMessageId())])),
      files: workflow.nodes.flatMap((node) => node.files.map((file) => ({ fileId: newDriveFileId(), nodeId: node.id, ...file }))),
    };
    this.#byId.set(record.executionId, record);
    for (const file of record.files) this.#fileOwners.set(file.fileId, record.executionId);
    return record;
  }

  get(executionId: string): ExecutionRecord | undefined {
    return this.#byId.get(executionId);
  }

  list(): ExecutionRecord[] {
    return [...this.#byId.values()];
  }

  /** service.md §3.5; returns undefined for an unknown id. */
  abort(executionId: string, now: number): ExecutionRecord | undefined {
    const record = this.#byId.get(executionId);
    if (record === undefined) return undefined;
    const aborted = { ...record, timeline: abortTimeline(record.timeline, now) };
    this.#byId.set(executionId, aborted);
    return aborted;
  }

  /** The file behind a public drive link, with its execution. */
  findFile(fileId: string): { readonly record: ExecutionRecord; readonly file: ExecutionFile } | undefined {
    const record = this.#byId.get(this.#fileOwners.get(fileId) ?? '');
    const file = record?.files.find((candidate) => candidate.fileId === fileId);
    return record === undefined || file === undefined ? undefined : { record, file };
  }
}
