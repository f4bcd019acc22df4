import type { NodeState, NodeStatus, OutputFile, PlanTask, RunState } from '../../src/index.js';
import { dagColumns } from './dag-layout.js';
import { element } from './dom.js';

/** What a run card shows, as `data-state` on it: tests and styles key on it. */
export type RunPhase = 'starting' | 'running' | 'finish' | 'failed' | 'aborted' | 'error';

const NODE_STATUS_LABELS: Readonly<Record<NodeStatus, string>> = {
  init: 'waiting',
  waiting: 'waiting',
  executing: 'running',
  finish: 'done',
  failed: 'failed',
  unknown: 'unknown',
};

/** One run's card: its elements, and the plan its graph is drawn from. */
export interface RunView {
  readonly section: HTMLElement;
  readonly cancel: HTMLButtonElement;
  readonly status: HTMLElement;
  readonly progress: HTMLProgressElement;
  readonly executionId: HTMLElement;
  readonly dag: HTMLElement;
  readonly files: HTMLElement;
  readonly tasks: readonly PlanTask[];
}

function withTestId<T extends HTMLElement>(node: T, id: string): T {
  node.dataset['testid'] = id;
  return node;
}

/** A new card at the top of `container`, for a run of the workflow `title` whose plan has `tasks`. */
export function createRunCard(container: HTMLElement, title: string, tasks: readonly PlanTask[]): RunView {
  const section = withTestId(element('section', 'run'), 'run');
  const heading = element('header', '');
  const cancel = element('button', 'cancel', 'Cancel');
  cancel.type = 'button';
  heading.append(element('h2', '', title), cancel);
  const status = withTestId(element('p', 'run-status'), 'run-status');
  status.setAttribute('role', 'status');
  const progress = element('progress', '');
  progress.setAttribute('aria-label', 'Task nodes done');
  const executionId = withTestId(element('code', ''), 'execution-id');
  const meta = element('p', 'meta', 'Execution ');
  meta.append(executionId);
  const dag = withTestId(element('div', 'dag'), 'dag');
  dag.setAttribute('aria-label', 'Workflow graph');
  const files = withTestId(element('ul', 'files'), 'files');
  files.setAttribute('aria-label', 'Files');
  section.append(heading, status, progress, meta, dag, element('h3', '', 'Files'), files);
  container.prepend(section);
  return { section, cancel, status, progress, executionId, dag, files, tasks };
}

function seconds(ms: number | undefined): string {
  return ms === undefined ? '' : `${(ms / 1000).toFixed(1)} s`;
}

function nodeItem(task: PlanTask, node: NodeState | undefined, column: number): HTMLLIElement {
  const status: NodeStatus = node?.status ?? 'init';
  const item = withTestId(element('li', 'node'), 'node');
  item.dataset['nodeId'] = task.id;
  item.dataset['status'] = status;
  item.dataset['column'] = String(column);
  const heading = element('h3', '');
  heading.append(element('span', 'node-title', node?.title ?? task.title), element('span', 'node-status', `${NODE_STATUS_LABELS[status]} ${seconds(node?.elapsedMs)}`.trim()));
  item.append(heading, element('p', 'node-text', node?.text ?? ''));
  if (node?.error !== undefined) item.append(element('p', 'node-error', node.error.message));
  return item;
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
    item.append(preview);
  }
  return item;
}

function describe(state: RunState): string {
  const { done, total } = state.progress;
  const elapsed = seconds(state.elapsedMs);
  if (state.result?.status === 'finish') return `Finished: ${done} of ${total} nodes done in ${elapsed}.`;
  if (state.result?.status === 'failed') return `Failed: ${state.result.failedNodes.length} node(s) failed, ${done} of ${total} done.`;
  return state.executionId === undefined ? 'Starting…' : `Running: ${done} of ${total} nodes done, ${elapsed}.`;
}

function phaseOf(state: RunState): RunPhase {
  if (state.result !== undefined) return state.result.status;
  return state.executionId === undefined ? 'starting' : 'running';
}

/** Shows the run as it is now: its graph laid out by dependencies, each task with its state. */
export function renderRunState(view: RunView, state: RunState): void {
  view.section.dataset['state'] = phaseOf(state);
  if (state.executionId !== undefined) view.section.dataset['executionId'] = state.executionId;
  view.status.textContent = describe(state);
  view.executionId.textContent = state.executionId ?? '…';
  view.progress.max = Math.max(state.progress.total, 1);
  view.progress.value = state.progress.succeeded;
  const byId = new Map(state.nodes.map((node) => [node.nodeId, node]));
  const tasks = new Map(view.tasks.map((task) => [task.id, task]));
  view.dag.replaceChildren(
    ...dagColumns(view.tasks).map((ids, column) => {
      const list = element('ol', 'dag-column');
      list.append(...ids.flatMap((id) => {
        const task = tasks.get(id);
        return task === undefined ? [] : [nodeItem(task, byId.get(id), column)];
      }));
      return list;
    }),
  );
  view.files.replaceChildren(...state.files.map(fileItem));
}

/** A run that ended without a result: aborted by the user, or failed to start or follow. */
export function renderRunEnd(view: RunView, phase: 'aborted' | 'error', message: string): void {
  view.section.dataset['state'] = phase;
  view.status.textContent = message;
  view.cancel.disabled = true;
}
