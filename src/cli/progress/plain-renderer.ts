import type { OutputNode, RunEvent, RunResult } from '../../index.js';
import { nodeLine } from '../format/node-line.js';
import { createPaint } from '../format/paint.js';
import { runSummary } from '../format/run-summary.js';
import type { RunRenderer, TextSink } from './renderer.js';
import { advanceProgress, initialProgress, progressCount, type RunProgress, withOutputNodes } from './run-progress.js';

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
        if (node === undefined || !node.task) return;
        const line = nodeLine(node, options.now(), paint);
        later(() => {
          const { done, total } = progressCount(progress);
          print(`[${done}/${total}] ${line}`);
        });
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
      case 'status':
      case 'file':
      case 'finished':
        // The summary at `close` reports the end and every file once.
        return;
      default:
        event satisfies never;
    }
  };

  return {
    event: (event) => {
      progress = advanceProgress(progress, event, options.now());
      show(event);
    },
    close: (result: RunResult | undefined) => {
      flush();
      if (result !== undefined) for (const line of runSummary(result, progress, options.now(), paint)) print(line);
    },
  };
}
