import type { RunEvent, RunResult } from '../../index.js';
import { nodeLine } from '../format/node-line.js';
import { createPaint } from '../format/paint.js';
import { runSummary } from '../format/run-summary.js';
import type { RunRenderer, TextSink } from './renderer.js';
import { advanceProgress, initialProgress, progressCount, type RunProgress } from './run-progress.js';

/** Options of the line-by-line display. */
export interface PlainRendererOptions {
  /** Leave out partial output (`--quiet`). */
  readonly quiet: boolean;
  /** The display clock. */
  readonly now: () => number;
}

/**
 * Pipes and CI: plain lines, no colour, no redrawing. A line when a node starts or ends (status and
 * elapsed time), partial output as it arrives, and the summary with files at the end.
 *
 * @example
 * ```ts
 * const renderer = plainRenderer(process.stdout, { quiet: false, now: Date.now });
 * ```
 */
export function plainRenderer(out: TextSink, options: PlainRendererOptions): RunRenderer {
  const paint = createPaint(false);
  let progress: RunProgress = initialProgress(options.now());
  const print = (line: string): void => {
    out.write(`${line}\n`);
  };

  const show = (event: RunEvent): void => {
    switch (event.type) {
      case 'started':
        print(`Started execution ${event.executionId}${event.canvasId === undefined ? '' : ` of ${event.canvasId}`}`);
        return;
      case 'node': {
        // Nodes waiting their turn are news only once they start.
        if (event.status === 'init' || event.status === 'waiting') return;
        const node = progress.nodes.find((entry) => entry.nodeId === event.nodeId);
        const { done, total } = progressCount(progress);
        if (node !== undefined) print(`[${done}/${total}] ${nodeLine(node, options.now(), paint)}`);
        return;
      }
      case 'message': {
        if (options.quiet) return;
        const title = progress.nodes.find((entry) => entry.nodeId === event.nodeId)?.title ?? event.nodeId;
        const text = event.replaced ? `(rewritten) ${event.delta}` : event.delta;
        for (const line of text.split('\n').filter((entry) => entry.trim() !== '')) print(`  ${title} │ ${line}`);
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
      if (result !== undefined) for (const line of runSummary(result, progress, options.now(), paint)) print(line);
    },
  };
}
