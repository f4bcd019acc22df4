import type { Workflow } from '../workflows/workflow.js';

/** A workflow on its canvas, with the times search orders by (service.md §5.1). */
export interface StoredWorkflow {
  readonly workflow: Workflow;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** Insertion order: breaks ties between equal times. */
  readonly sequence: number;
}

/** The canvases of the emulator's one account. */
export class WorkflowRegistry {
  readonly #byId = new Map<string, StoredWorkflow>();
  #sequence = 0;

  add(workflow: Workflow, now: number): StoredWorkflow {
    if (this.#byId.has(workflow.canvasId)) throw new Error(`a workflow with canvasId ${workflow.canvasId} already exists`);
    const stored = { workflow, createdAt: now, updatedAt: now, sequence: this.#sequence++ };
    this.#byId.set(workflow.canvasId, stored);
    return stored;
  }

  /** Replaces the content of an existing canvas, keeping its id and creation time (service.md §5.3). */
  replace(workflow: Workflow, now: number): StoredWorkflow {
    const existing = this.#byId.get(workflow.canvasId);
    if (existing === undefined) throw new Error(`no workflow with canvasId ${workflow.canvasId}`);
    const stored = { ...existing, workflow, updatedAt: now };
    this.#byId.set(workflow.canvasId, stored);
    return stored;
  }

  get(canvasId: string): StoredWorkflow | undefined {
    return this.#byId.get(canvasId);
  }

  list(): StoredWorkflow[] {
    return [...this.#byId.values()];
  }

  remove(canvasId: string): boolean {
    return this.#byId.delete(canvasId);
  }
}
