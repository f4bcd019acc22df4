import type { OutputNode, RunEvent, RunResult } from '../../index.js';
import { formatDuration } from '../format/duration.js';
import { nodeLine } from '../format/node-line.js';
import { createPaint } from '../format/paint.js';
import { runSummary } from '../format/run-summary.js';
import type { RunRenderer, TextSink } from './renderer.js';
import { advanceProgress, countFigures, initialProgress, progressCount, type NodeProgress, type RunProgress, withOutputNodes } from './run-progress.js';

/** Options of the line-by-line display. */
export interface PlainRendererOptions {
  /** Leave out partial output (`--quiet`). */
  readonly quiet: boolean;
  /** The display clock. */
  readonly now: () => number;
  /** Task nodes known before the first event (`watch` reads them when it attaches). */
  readonly known?: readonly OutputNode[];
  /** When the execution was created (service.md §4.1), for one that began before the display (`watch`). */
  readonly createdAt?: string;
}

/**
 * Pipes and CI: plain lines, no colour, no redrawing. A line when a node starts or ends (status and
 * elapsed time), partial output as it arrives, and the summary with files at the end.
 */
export function plainRenderer(out: TextSink, options: PlainRendererOptions): RunRenderer {
  const paint = createPaint(false);
  let progress: RunProgress = withOutputNodes(initialProgress(options.now(), options.createdAt), options.known ?? [], options.now());
  const print = (line: string): void => {
    out.write(`${line}\n`);
  };
  // The events of one poll arrive together, synchronously (a status read lists every node, service.md
  // §4.1); their lines are printed once all of them are in, so a count never shows a total that the
  // same read is about to raise.
  let pending: (() => void)[] = [];
  const flush = (): void => {
    const lines = pending;
    pending = [];
    for (const line of lines) line();
  };
  const later = (line: () => void): void => {
    if (pending.length === 0) queueMicrotask(flush);
    pending.push(line);
  };

  // The outage the run was reading through before the event being shown.
  let outage: RunProgress['reconnecting'];
  const printNode = (node: NodeProgress): void => {
    const line = nodeLine(node, options.now(), paint);
    later(() => {
      print(`[${countFigures(progressCount(progress))}] ${line}`);
    });
  };
  // Nodes first seen done that may be tasks: one that fails as it starts (service.md §3.7) or ends
  // between two status reads is never seen executing, and a done node may be one with no work (§3.2).
  // Its line comes once its text or the output (§4.2) shows it is a task.
  const undecided = new Set<string>();
  const printLearnedTasks = (): void => {
    for (const nodeId of undecided) {
      const node = progress.nodes.find((entry) => entry.nodeId === nodeId);
      if (node?.task !== true) continue;
      undecided.delete(nodeId);
      printNode(node);
    }
  };
  const show = (event: RunEvent): void => {
    switch (event.type) {
      case 'started':
        later(() => {
          print(`Started execution ${event.executionId}${event.canvasId === undefined ? '' : ` of ${event.canvasId}`}`);
        });
        return;
      case 'node': {
        // Nodes waiting their turn are news only once they start; a node with no work is no news.
        if (event.status === 'init' || event.status === 'waiting') return;
        const node = progress.nodes.find((entry) => entry.nodeId === event.nodeId);
        if (node === undefined) return;
        if (node.task) printNode(node);
        else undecided.add(node.nodeId);
        return;
      }
      case 'message': {
        if (options.quiet) return;
        const title = progress.nodes.find((entry) => entry.nodeId === event.nodeId)?.title ?? event.nodeId;
        const text = event.replaced ? `(rewritten) ${event.delta}` : event.delta;
        later(() => {
          for (const line of text.split('\n').filter((entry) => entry.trim() !== '')) print(`  ${title} │ ${line}`);
        });
        return;
      }
      case 'connection': {
        // One line as the outage starts, one as it ends; the attempts between are no news.
        const { reconnecting } = event;
        if (reconnecting !== undefined && reconnecting.attempts === 1) {
          later(() => {
            print(`Reconnecting: reads fail (${reconnecting.error}); reading again with backoff`);
          });
        }
        if (reconnecting === undefined && outage !== undefined) {
          const { sinceMs, attempts } = outage;
          later(() => {
            print(`Reconnected after ${formatDuration(options.now() - sinceMs)} (${attempts} failed ${attempts === 1 ? 'attempt' : 'attempts'})`);
          });
        }
        return;
      }
      case 'snapshot':
      case 'status':
      case 'file':
      case 'finished':
        // The summary at `close` reports the end and every file once; a snapshot only catches up.
        return;
      default:
        event satisfies never;
    }
  };

  return {
    event: (event) => {
      outage = progress.reconnecting;
      progress = advanceProgress(progress, event, options.now());
      show(event);
      printLearnedTasks();
    },
    close: (result: RunResult | undefined) => {
      flush();
      if (result !== undefined) for (const line of runSummary(result, progress, options.now(), paint)) print(line);
    },
  };
}
