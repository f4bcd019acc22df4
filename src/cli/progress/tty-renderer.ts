import spinners from 'cli-spinners';
import { createLogUpdate } from 'log-update';
import type { OutputNode, RunEvent, RunResult } from '../../index.js';
import { cutToWidth } from '../format/display-width.js';
import { formatDuration } from '../format/duration.js';
import { nodeLine } from '../format/node-line.js';
import { createPaint, type Paint } from '../format/paint.js';
import { runSummary } from '../format/run-summary.js';
import type { RunRenderer } from './renderer.js';
import { advanceProgress, countLabel, initialProgress, type ProgressCount, progressCount, type RunProgress, withOutputNodes } from './run-progress.js';

/** Options of the live display. */
export interface TtyRendererOptions {
  readonly quiet: boolean;
  readonly now: () => number;
  /** Colours (the stream's `hasColors()`, which honours `NO_COLOR`). */
  readonly colors: boolean;
  /** Task nodes known before the first event (`watch` reads them when it attaches). */
  readonly known?: readonly OutputNode[];
  /** When the execution was created (service.md §4.1), for one that began before the display (`watch`). */
  readonly createdAt?: string;
}

const BAR_WIDTH = 20;
const DEFAULT_COLUMNS = 80;

/** Succeeded tasks fill the bar, failed ones follow in the failure colour: an aborted run is not a full bar of success. */
function bar({ succeeded, done, total }: ProgressCount, paint: Paint): string {
  const filled = total === 0 ? 0 : Math.round((succeeded / total) * BAR_WIDTH);
  const ended = total === 0 ? 0 : Math.round((done / total) * BAR_WIDTH);
  return `${paint.ok('█'.repeat(filled))}${paint.fail('▓'.repeat(ended - filled))}${paint.dim('░'.repeat(BAR_WIDTH - ended))}`;
}

/**
 * The block drawn in place: `spinner` turns in the header and, while the run goes on, on each executing
 * node. The last frame has the run's end mark in the header and no `running` spinner: a node that still
 * executes (a branch that runs on after a failure, service.md §3.3) keeps the plain mark of one, not
 * the run's failure.
 */
function frame(progress: RunProgress, nowMs: number, spinner: string, paint: Paint, width: number, running: string | undefined): string {
  const counted = progressCount(progress);
  const what = [progress.canvasId, progress.executionId].filter((part) => part !== undefined).join(' · ');
  // Before the first status read the count is unknown, not 0/0.
  const count = counted.total === 0 ? '' : `${bar(counted, paint)} ${countLabel(counted)}  `;
  const header = `${paint.busy(spinner)} ${count}${formatDuration(nowMs - progress.startedAtMs)}  ${paint.dim(what === '' ? 'starting…' : what)}`;
  const lines = [header];
  const { reconnecting } = progress;
  if (reconnecting !== undefined) {
    const since = formatDuration(nowMs - reconnecting.sinceMs);
    lines.push(paint.dim(`  reconnecting… ${reconnecting.error} (since ${since}, attempt ${reconnecting.attempts})`.slice(0, Math.max(10, width - 1))));
  }
  for (const node of progress.nodes.filter((entry) => entry.task)) {
    lines.push(`  ${nodeLine(node, nowMs, paint, running)}`);
    // The latest text under a running node, cut to the terminal's columns (not UTF-16 units: a CJK
    // character takes two, an emoji is one character of two units) so that the frame never wraps.
    if (node.status === 'executing' && node.lastLine !== '') lines.push(paint.dim(cutToWidth(`      ${node.lastLine}`, Math.max(10, width - 1))));
  }
  return lines.join('\n');
}

/**
 * A terminal: one frame redrawn in place — a spinner and bar for the run, one line per node with its
 * status and elapsed time — and each finished piece of output printed above it as it arrives.
 */
export function ttyRenderer(stream: NodeJS.WriteStream, options: TtyRendererOptions): RunRenderer {
  const paint = createPaint(options.colors);
  const update = createLogUpdate(stream);
  const { frames, interval } = spinners.dots;
  let tick = 0;
  let progress: RunProgress = withOutputNodes(initialProgress(options.now(), options.createdAt), options.known ?? [], options.now());
  // One frame per poll, not per event: the events of one read arrive together (see plainRenderer).
  let drawPending = false;
  let closed = false;
  const drawSoon = (): void => {
    if (drawPending) return;
    drawPending = true;
    queueMicrotask(() => {
      drawPending = false;
      if (!closed) draw();
    });
  };
  // A terminal that does not tell its size (`columns` 0 or absent) is taken for the common 80 columns.
  const columns = (): number => (stream.columns > 0 ? stream.columns : DEFAULT_COLUMNS);
  const draw = (): void => {
    const spinner = frames[tick % frames.length] ?? '-';
    update(frame(progress, options.now(), spinner, paint, columns(), spinner));
  };
  const timer = setInterval(() => {
    tick += 1;
    draw();
  }, interval);

  const printAbove = (event: Extract<RunEvent, { type: 'message' }>): void => {
    const title = progress.nodes.find((node) => node.nodeId === event.nodeId)?.title ?? event.nodeId;
    const text = event.delta.trim();
    if (options.quiet || text === '') return;
    // Above the live block, in the scrollback: log-update erases the block, writes the text wrapped to
    // the terminal's width, and draws the block again on the next frame.
    update.persist(`${paint.bold(title)} ${paint.dim('│')} ${event.replaced ? paint.dim('(rewritten) ') : ''}${text}`);
  };

  draw();
  return {
    event: (event) => {
      progress = advanceProgress(progress, event, options.now());
      if (event.type === 'message') printAbove(event);
      drawSoon();
    },
    close: (result: RunResult | undefined) => {
      closed = true;
      clearInterval(timer);
      const mark = result === undefined ? '■' : result.status === 'finish' ? '✔' : '✖';
      update(frame(progress, options.now(), mark, paint, columns(), undefined));
      update.done();
      if (result !== undefined) stream.write(`${runSummary(result, progress, options.now(), paint).join('\n')}\n`);
    },
  };
}
