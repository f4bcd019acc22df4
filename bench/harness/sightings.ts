import type { ExecutionView } from '../../src/emulator/index.js';

/**
 * What a client has seen of one execution, whatever the client: the first moment (emulator ms) it
 * knew that a task node had started, that it had ended, and that the execution had settled. Seeing a
 * later status counts as seeing the earlier change too: a node found `finish` between two polls
 * started and ended before that poll.
 */
export class Sightings {
  readonly #firstSeen = new Map<string, Map<string, number>>();

  /** Records the node statuses and execution status the client knows at `now`. */
  see(executionId: string, now: number, view: { readonly status?: string; readonly nodes?: readonly { readonly nodeId: string; readonly status: string }[] }): void {
    let seen = this.#firstSeen.get(executionId);
    if (seen === undefined) this.#firstSeen.set(executionId, (seen = new Map<string, number>()));
    const mark = (key: string): void => {
      if (!seen.has(key)) seen.set(key, now);
    };
    for (const node of view.nodes ?? []) {
      if (node.status === 'executing' || isEnded(node.status)) mark(`start:${node.nodeId}`);
      if (isEnded(node.status)) mark(`end:${node.nodeId}`);
    }
    if (view.status !== undefined && isEnded(view.status)) mark('settle');
  }

  /**
   * Every server-side change of the execution — a task node starting or ending, the execution
   * settling — with the emulator's own moment of change (service.md §3.3: `settledAt` is on the
   * status tick) and, when the client saw it, the detection latency.
   */
  changes(execution: ExecutionView): Change[] {
    const seen = this.#firstSeen.get(execution.executionId) ?? new Map<string, number>();
    const changes: Change[] = [];
    const add = (key: string, at: number | undefined): void => {
      if (at === undefined) return;
      const seenAt = seen.get(key);
      changes.push({ key, at, latencyMs: seenAt === undefined ? undefined : Math.max(0, seenAt - at) });
    };
    for (const node of execution.nodes) {
      if (node.type !== 'task') continue;
      add(`start:${node.nodeId}`, node.startedAt);
      add(`end:${node.nodeId}`, node.endedAt);
    }
    add('settle', execution.settledAt);
    return changes;
  }
}

export interface Change {
  readonly key: string;
  /** When it happened on the server, emulator ms. */
  readonly at: number;
  /** How long until the client saw it; undefined when it never did. */
  readonly latencyMs: number | undefined;
}

function isEnded(status: string): boolean {
  return status === 'finish' || status === 'failed';
}
