import fc from 'fast-check';
import type { ExecutionOutput, ExecutionSnapshot, ExecutionStatus, NodeStatus, OutputFile } from '../../src/domain/model.js';
import { EXECUTION_ID } from './fixtures.js';

/**
 * A model of an execution as the service (or a spec-faithful server) runs it, to generate the
 * sequences of readings a real run could see. Task nodes form a DAG and move
 * `init → executing → finish | failed` (service.md §3.2) once their parents finished; downstream of a
 * failure stays `init` (§3.4); messages appear only while executing; files only for finished nodes
 * (§4.6). The execution turns `failed` at once on a failure and `finish` one tick after everything is
 * done (§3.3).
 */
export type PartialOutputMode = 'service' | 'spec';

interface ModelMessage {
  readonly messageId: string;
  content: string;
  reasoningContent: string;
}

interface ModelNode {
  readonly nodeId: string;
  readonly parents: readonly string[];
  status: NodeStatus;
  readonly messages: ModelMessage[];
  readonly files: OutputFile[];
}

export interface Step {
  readonly node: number;
  readonly action: 'advance' | 'text' | 'file';
  readonly fail: boolean;
  readonly text: string;
  readonly reasoning: string;
  /** spec mode: rewrite the last message instead of growing it. */
  readonly rewrite: boolean;
  /** spec mode: start a new message. */
  readonly fresh: boolean;
  /** The client reads the status after this step. */
  readonly sample: boolean;
  /** …and the output too. */
  readonly readOutput: boolean;
  /** …or the output alone, without the status, as a streaming run does while the execution runs. */
  readonly outputAlone: boolean;
}

export interface Scenario {
  readonly parents: readonly (readonly boolean[])[];
  readonly steps: readonly Step[];
}

const textArb = fc.string({ unit: fc.constantFrom('a', 'b', 'c'), minLength: 1, maxLength: 3 });

const stepArb = fc.record({
  node: fc.nat(5),
  action: fc.constantFrom<Step['action']>('advance', 'advance', 'text', 'text', 'file'),
  fail: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  text: textArb,
  reasoning: fc.oneof(fc.constant(''), textArb),
  rewrite: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
  fresh: fc.integer({ min: 0, max: 2 }).map((n) => n === 0),
  sample: fc.boolean(),
  readOutput: fc.boolean(),
  outputAlone: fc.boolean(),
});

export const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  parents: fc.array(fc.array(fc.boolean(), { maxLength: 6 }), { minLength: 1, maxLength: 6 }),
  steps: fc.array(stepArb, { minLength: 10, maxLength: 120, size: 'max' }),
});

/** One reading of the execution: what status and output answer at that moment. */
export interface Reading {
  readonly status: ExecutionSnapshot;
  readonly output: ExecutionOutput;
  readonly readOutput: boolean;
  /** The output was read without the status: only its task nodes' statuses were seen. */
  readonly outputAlone: boolean;
}

export class ExecutionModel {
  readonly nodes: ModelNode[];
  #allDoneBefore = false;
  #status: ExecutionStatus = 'executing';
  #counter = 0;

  constructor(
    readonly mode: PartialOutputMode,
    parents: readonly (readonly boolean[])[],
  ) {
    this.nodes = parents.map((links, index) => ({
      nodeId: `node-${index}`,
      parents: links.slice(0, index).flatMap((linked, parent) => (linked ? [`node-${parent}`] : [])),
      status: 'init',
      messages: [],
      files: [],
    }));
  }

  apply(step: Step): void {
    const target = this.nodes[step.node % this.nodes.length]!;
    switch (step.action) {
      case 'advance':
        this.#advance(target, step.fail);
        break;
      case 'text':
        if (target.status === 'executing') this.#write(target, step);
        break;
      case 'file':
        if (target.status === 'finish') {
          const name = `f${this.#counter++}.txt`;
          target.files.push({ name, type: 'text/plain', size: 3, nodeId: target.nodeId, url: `https://x/v1/drive/file/public/df-1/${name}` });
        }
        break;
    }
    this.#tick();
  }

  #advance(target: ModelNode, fail: boolean): void {
    if (target.status === 'init') {
      const ready = target.parents.every((parent) => this.nodes.find((candidate) => candidate.nodeId === parent)?.status === 'finish');
      if (ready) target.status = 'executing';
    } else if (target.status === 'executing') {
      target.status = fail ? 'failed' : 'finish';
    }
  }

  #write(target: ModelNode, step: Step): void {
    const last = target.messages.at(-1);
    if (this.mode === 'service' || step.fresh || last === undefined) {
      target.messages.push({ messageId: `am-${this.#counter++}`, content: step.text, reasoningContent: step.reasoning });
    } else if (step.rewrite) {
      last.content = step.text;
      last.reasoningContent = step.reasoning;
    } else {
      last.content += step.text;
      last.reasoningContent += step.reasoning;
    }
  }

  #tick(): void {
    if (this.#status !== 'executing') return;
    if (this.nodes.some((candidate) => candidate.status === 'failed')) {
      this.#status = 'failed';
      return;
    }
    const allDone = this.nodes.every((candidate) => candidate.status === 'finish');
    if (allDone && this.#allDoneBefore) this.#status = 'finish';
    this.#allDoneBefore = allDone;
  }

  read(readOutput: boolean, outputAlone = false): Reading {
    return {
      status: {
        executionId: EXECUTION_ID,
        status: this.#status,
        rawStatus: this.#status,
        nodes: [
          { nodeId: 'node-start', status: 'finish', rawStatus: 'finish', title: 'Start' },
          ...this.nodes.map((entry) => ({ nodeId: entry.nodeId, status: entry.status, rawStatus: entry.status, title: `Task ${entry.nodeId}` })),
        ],
      },
      output: {
        output: this.nodes.map((entry) => ({
          nodeId: entry.nodeId,
          title: `Task ${entry.nodeId}`,
          status: entry.status,
          rawStatus: entry.status,
          messages: entry.messages.map((entry) => ({ ...entry, type: 'ai' as const, rawType: 'ai' })),
        })),
        files: this.nodes.flatMap((entry) => entry.files),
      },
      readOutput,
      outputAlone,
    };
  }

  get status(): ExecutionStatus {
    return this.#status;
  }
}

/** The readings a client polling this scenario would make, up to the first terminal one (read with output). */
export function readings(mode: PartialOutputMode, scenario: Scenario): Reading[] {
  const model = new ExecutionModel(mode, scenario.parents);
  const result: Reading[] = [];
  for (const step of scenario.steps) {
    model.apply(step);
    const terminal = model.status !== 'executing';
    // The first reading and the terminal one are always of the status, as a run's are.
    const outputAlone = step.outputAlone && !terminal && result.length > 0;
    if (step.sample || terminal) result.push(model.read(step.readOutput || terminal, outputAlone));
    if (terminal) return result;
  }
  result.push(model.read(true));
  return result;
}
