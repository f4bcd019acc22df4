import type { NodeState, NodeStatus, OutputFile, RunState } from '../../src/index.js';
import type { DashboardWorkflow } from './dashboard-server.js';
import { graphLayout } from './dag-layout.js';
import { element } from './dom.js';
import { nodeSpans } from './node-times.js';

/**
 * What a run card shows, as `data-state` on it (tests and styles key on it): `starting` until the relay
 * answered the start, then the run's phase. `failed` comes as soon as
 * the service says so, before the result; `cancelling` from Cancel until the service confirms the end.
 */
export type RunPhase = 'starting' | 'running' | 'cancelling' | 'finish' | 'failed' | 'aborted' | 'timeout' | 'error';

const NODE_STATUS_LABELS: Readonly<Record<NodeStatus, string>> = {
  init: 'waiting',
  waiting: 'waiting',
  executing: 'running',
  finish: 'done',
  failed: 'failed',
  unknown: 'unknown',
};

const SVG = 'http://www.w3.org/2000/svg';

/** One run's card: its elements, what it has shown so far, and the workflow its graph is drawn from. */
export interface RunView {
  readonly section: HTMLElement;
  readonly cancel: HTMLButtonElement;
  readonly status: HTMLElement;
  readonly progress: HTMLElement;
  readonly executionId: HTMLElement;
  readonly timeline: HTMLElement;
  readonly texts: HTMLElement;
  readonly files: HTMLElement;
  readonly nodes: ReadonlyMap<string, SVGGElement>;
  readonly workflow: DashboardWorkflow;
  /** The last file list drawn, so that previews are not reloaded on every state. */
  shownFiles: string;
}

function withTestId<T extends HTMLElement | SVGElement>(node: T, id: string): T {
  node.dataset['testid'] = id;
  return node;
}

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attributes: Record<string, string | number>, text = ''): SVGElementTagNameMap[K] {
  const created = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) created.setAttribute(name, String(value));
  if (text !== '') created.textContent = text;
  return created;
}

/** The workflow's graph: a box per task, a curve per dependency; boxes are coloured by their node's state. */
function graph(workflow: DashboardWorkflow): { drawing: SVGSVGElement; nodes: Map<string, SVGGElement> } {
  const layout = graphLayout(workflow.tasks);
  const pad = 4;
  const drawing = svg('svg', { class: 'graph', width: layout.width + 2 * pad, height: layout.height + 2 * pad, viewBox: `${-pad} ${-pad} ${layout.width + 2 * pad} ${layout.height + 2 * pad}`, role: 'img', 'aria-label': 'Workflow graph' });
  withTestId(drawing, 'dag');
  const arrow = svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' });
  arrow.append(svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow' }));
  const defs = svg('defs', {});
  defs.append(arrow);
  drawing.append(defs);
  for (const edge of layout.edges) drawing.append(withTestId(svg('path', { class: 'edge', d: edge.path, 'marker-end': 'url(#arrow)', 'data-from': edge.from, 'data-to': edge.to }), 'edge'));
  const titles = new Map(workflow.tasks.map((task) => [task.id, task.title]));
  const nodes = new Map<string, SVGGElement>();
  for (const task of layout.tasks) {
    const box = withTestId(svg('g', { class: 'node', transform: `translate(${task.x},${task.y})`, 'data-node-id': task.id, 'data-status': 'init', 'data-column': task.column }), 'node');
    box.append(
      svg('rect', { width: layout.boxWidth, height: layout.boxHeight, rx: 6 }),
      svg('text', { class: 'node-title', x: 10, y: 21 }, titles.get(task.id) ?? task.id),
      svg('text', { class: 'node-status', x: 10, y: 40 }, 'waiting'),
    );
    nodes.set(task.id, box);
    drawing.append(box);
  }
  return { drawing, nodes };
}

function heading(text: string): HTMLHeadingElement {
  return element('h3', '', text);
}

/** A new card at the top of `container` for a run of `workflow` being started (see {@link showExecution}). */
export function createRunCard(container: HTMLElement, workflow: DashboardWorkflow): RunView {
  const section = withTestId(element('section', 'run'), 'run');
  section.dataset['state'] = 'starting';
  const top = element('header', '');
  const cancel = element('button', 'cancel', 'Cancel');
  cancel.type = 'button';
  cancel.disabled = true;
  top.append(element('h2', '', workflow.title), cancel);
  const status = withTestId(element('p', 'run-status', 'Starting…'), 'run-status');
  status.setAttribute('role', 'status');
  const progress = withTestId(element('div', 'progress'), 'progress');
  progress.setAttribute('role', 'img');
  progress.append(element('span', 'bar-succeeded'), element('span', 'bar-failed'));
  const meta = element('p', 'meta', 'Execution ');
  const executionId = withTestId(element('code', '', '…'), 'execution-id');
  meta.append(executionId);
  const { drawing, nodes } = graph(workflow);
  const timeline = withTestId(element('div', 'timeline'), 'timeline');
  timeline.setAttribute('aria-label', 'Timeline of the nodes');
  const texts = withTestId(element('div', 'texts'), 'texts');
  texts.hidden = true;
  const files = withTestId(element('div', 'files'), 'files');
  files.hidden = true;
  const panels = element('div', 'panels');
  const graphPanel = element('div', 'graph-panel');
  graphPanel.append(drawing);
  panels.append(graphPanel, timeline);
  section.append(top, status, progress, meta, panels, texts, files);
  container.prepend(section);
  return { section, cancel, status, progress, executionId, timeline, texts, files, nodes, workflow, shownFiles: '' };
}

/** The start was answered: the card stands for `executionId` from now on, connecting to its events. */
export function showExecution(view: RunView, executionId: string): void {
  view.section.dataset['executionId'] = executionId;
  view.section.dataset['state'] = 'running';
  view.executionId.textContent = executionId;
  view.status.textContent = 'Connecting…';
  view.cancel.disabled = false;
}

function seconds(ms: number | undefined): string {
  return ms === undefined ? '' : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * What the card shows for `state` (`undefined` before the first): the result's end when it came; else
 * `cancelling` from Cancel; else `failed` as soon as a task node failed (the execution is failed from
 * then on; its result, with every node's end, follows).
 */
export function runPhase(state: RunState | undefined, cancelling: boolean): RunPhase {
  const result = state?.result;
  if (result !== undefined) return result.endedBy;
  if (cancelling) return 'cancelling';
  // service.md §3.3: a failed node fails the execution (on the service's next tick); its other branches may run on.
  return state?.status === 'failed' || (state?.progress.failed ?? 0) > 0 ? 'failed' : 'running';
}

function progressText(state: RunState): string {
  const { succeeded, failed, total } = state.progress;
  return `${succeeded} of ${total} node(s) succeeded${failed > 0 ? `, ${failed} failed` : ''}`;
}

function describe(state: RunState, phase: RunPhase): string {
  const elapsed = seconds(state.elapsedMs);
  switch (phase) {
    case 'finish':
      return `Finished: ${progressText(state)} in ${elapsed}.`;
    case 'failed':
      return state.result === undefined ? `Failed: reading the result… (${progressText(state)})` : `Failed: ${progressText(state)}.`;
    case 'aborted':
      return `Aborted: ${progressText(state)}.`;
    case 'timeout':
      return `Timed out: ${progressText(state)}.`;
    case 'cancelling':
      return `Cancelling… waiting for the service to confirm (${progressText(state)}).`;
    case 'running':
      return state.reconnecting === undefined ? `Running: ${progressText(state)}, ${elapsed}.` : `Reconnecting (${state.reconnecting.error})… ${progressText(state)}.`;
    case 'starting':
      return 'Starting…';
    case 'error':
      return 'Stopped by an error (shown above).';
    default:
      return assertNever(phase);
  }
}

function renderNode(box: SVGGElement, node: NodeState | undefined): void {
  const status: NodeStatus = node?.status ?? 'init';
  box.dataset['status'] = status;
  const label = box.querySelector('.node-status');
  if (label !== null) label.textContent = `${NODE_STATUS_LABELS[status]} ${seconds(node?.elapsedMs)}`.trim();
  box.querySelector('title')?.remove();
  if (node?.error !== undefined) box.append(svg('title', {}, node.error.message));
}

function renderTimeline(view: RunView, state: RunState, byId: ReadonlyMap<string, NodeState>): void {
  const spans = nodeSpans(view.workflow.tasks, state);
  const scale = Math.max(1, ...[...spans.values()].map((span) => span.endMs));
  const rows = view.workflow.tasks.map((task) => {
    const row = element('div', 'timeline-row');
    const bar = withTestId(element('span', 'timeline-bar'), 'timeline-bar');
    bar.dataset['nodeId'] = task.id;
    bar.dataset['status'] = byId.get(task.id)?.status ?? 'init';
    const span = spans.get(task.id);
    if (span === undefined) {
      bar.hidden = true;
    } else {
      bar.style.left = `${(100 * span.startMs) / scale}%`;
      bar.style.width = `${Math.max(0.5, (100 * (span.endMs - span.startMs)) / scale)}%`;
      bar.title = `${task.title}: ${seconds(span.startMs)} → ${span.ended ? seconds(span.endMs) : '…'}`;
    }
    const track = element('span', 'timeline-track');
    track.append(bar);
    row.append(element('span', 'timeline-label', task.title), track);
    return row;
  });
  view.timeline.replaceChildren(heading(`Timeline · ${seconds(scale)} of node time`), ...rows);
}

function renderTexts(view: RunView, state: RunState): void {
  const withText = state.nodes.filter((node) => node.text !== '');
  view.texts.hidden = withText.length === 0;
  view.texts.replaceChildren(
    heading('Text'),
    ...withText.map((node) => {
      const block = withTestId(element('div', 'node-text-block'), 'node-text');
      block.dataset['nodeId'] = node.nodeId;
      block.append(element('h4', '', node.title ?? node.nodeId), element('p', 'node-text', node.text));
      return block;
    }),
  );
}

function fileItem(file: OutputFile): HTMLLIElement {
  const item = element('li', '');
  // service.md §4.6: the url is public; only http(s) is linked, so a hostile payload cannot plant a javascript: link.
  const url = file.url === undefined ? undefined : new URL(file.url, location.href);
  const safe = url !== undefined && (url.protocol === 'http:' || url.protocol === 'https:');
  if (safe) {
    const link = element('a', '', file.name);
    link.href = url.href;
    link.rel = 'noopener';
    link.target = '_blank';
    item.append(link);
  } else {
    item.append(element('span', '', file.name));
  }
  item.append(element('span', 'meta', ` ${file.type}${file.size === undefined ? '' : `, ${file.size} bytes`}`));
  if (safe && file.type.startsWith('image/')) {
    const preview = element('img', 'preview');
    preview.src = url.href;
    preview.alt = file.name;
    preview.referrerPolicy = 'no-referrer';
    // A picture that does not decode says so instead of showing a broken image.
    preview.addEventListener('error', () => { preview.replaceWith(element('span', 'meta', ' (no preview)')); }, { once: true });
    item.append(preview);
  }
  return item;
}

function renderFiles(view: RunView, state: RunState): void {
  const key = JSON.stringify(state.files.map((file) => [file.name, file.url]));
  if (key === view.shownFiles) return;
  view.shownFiles = key;
  view.files.hidden = state.files.length === 0;
  const list = element('ul', '');
  list.append(...state.files.map(fileItem));
  view.files.replaceChildren(heading('Files'), list);
}

/** Shows the run as it is now: its phase, progress (succeeded and failed apart), graph, timeline, text and files. */
export function renderRunState(view: RunView, state: RunState, cancelling: boolean): void {
  const phase = runPhase(state, cancelling);
  view.section.dataset['state'] = phase;
  view.status.textContent = describe(state, phase);
  // Cancel only while the run may still be stopped and no cancel is under way.
  view.cancel.disabled = phase !== 'running';
  const { succeeded, failed, total } = state.progress;
  const whole = Math.max(total, 1);
  view.progress.dataset['succeeded'] = String(succeeded);
  view.progress.dataset['failed'] = String(failed);
  view.progress.dataset['total'] = String(total);
  view.progress.setAttribute('aria-label', progressText(state));
  const [good, bad] = view.progress.children;
  if (good instanceof HTMLElement) good.style.width = `${(100 * succeeded) / whole}%`;
  if (bad instanceof HTMLElement) bad.style.width = `${(100 * failed) / whole}%`;
  const byId = new Map(state.nodes.map((node) => [node.nodeId, node]));
  for (const [id, box] of view.nodes) renderNode(box, byId.get(id));
  renderTimeline(view, state, byId);
  renderTexts(view, state);
  renderFiles(view, state);
}

/** A run the page could not follow (the relay refused it, or the stream failed for good). */
export function renderRunError(view: RunView, message: string): void {
  view.section.dataset['state'] = 'error';
  view.status.textContent = `Stopped: ${message}`;
  view.cancel.disabled = true;
}

function assertNever(value: never): never {
  throw new Error(`Unexpected phase ${String(value)}`);
}
