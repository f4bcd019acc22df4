import type { NodeState, NodeStatus, OutputFile, RunState } from '../../src/index.js';
import { byId, element } from './dom.js';

/** What the run section shows, as `data-state` on it: tests and styles key on it. */
export type RunPhase = 'starting' | 'running' | 'finish' | 'failed' | 'cancelled' | 'error';

const NODE_STATUS_LABELS: Readonly<Record<NodeStatus, string>> = {
  init: 'waiting',
  waiting: 'waiting',
  executing: 'running',
  finish: 'done',
  failed: 'failed',
  unknown: 'unknown',
};

/** The run section's elements. */
export interface RunView {
  readonly section: HTMLElement;
  readonly status: HTMLElement;
  readonly progress: HTMLProgressElement;
  readonly executionId: HTMLElement;
  readonly nodes: HTMLElement;
  readonly files: HTMLElement;
}

export function findRunView(): RunView {
  return {
    section: byId('run', HTMLElement),
    status: byId('run-status', HTMLElement),
    progress: byId('run-progress', HTMLProgressElement),
    executionId: byId('execution-id', HTMLElement),
    nodes: byId('nodes', HTMLOListElement),
    files: byId('files', HTMLUListElement),
  };
}

function nodeItem(node: NodeState): HTMLLIElement {
  const item = element('li', '');
  item.dataset['testid'] = 'node';
  item.dataset['nodeId'] = node.nodeId;
  item.dataset['status'] = node.status;
  const heading = element('h3', '');
  heading.append(element('span', 'node-title', node.title ?? node.nodeId), element('span', 'node-status', NODE_STATUS_LABELS[node.status]));
  item.append(heading, element('p', 'node-text', node.text));
  if (node.error !== undefined) item.append(element('p', 'node-error', node.error.message));
  return item;
}

function fileItem(file: OutputFile): HTMLLIElement {
  const item = element('li', '');
  // PROTOCOL §4.6: the url is public; only http(s) is linked, so a hostile payload cannot plant a javascript: link.
  const url = file.url === undefined ? undefined : new URL(file.url, location.href);
  if (url !== undefined && (url.protocol === 'http:' || url.protocol === 'https:')) {
    const link = element('a', '', file.name);
    link.href = url.href;
    link.rel = 'noopener';
    link.target = '_blank';
    item.append(link);
  } else {
    item.append(element('span', '', file.name));
  }
  item.append(element('span', 'meta', ` ${file.type}${file.size === undefined ? '' : `, ${file.size} bytes`}`));
  return item;
}

function describe(state: RunState): string {
  const { done, total } = state.progress;
  const seconds = (state.elapsedMs / 1000).toFixed(1);
  if (state.result?.status === 'finish') return `Finished: ${done} of ${total} nodes done in ${seconds} s.`;
  if (state.result?.status === 'failed') return `Failed: ${state.result.failedNodes.length} node(s) failed, ${done} of ${total} done.`;
  return state.executionId === undefined ? 'Starting…' : `Running: ${done} of ${total} nodes done.`;
}

function phaseOf(state: RunState): RunPhase {
  if (state.result !== undefined) return state.result.status;
  return state.executionId === undefined ? 'starting' : 'running';
}

/** Shows the run as it is now; rebuilt whole on each state, which is cheap at a workflow's size. */
export function renderRunState(view: RunView, state: RunState): void {
  view.section.hidden = false;
  view.section.dataset['state'] = phaseOf(state);
  view.status.textContent = describe(state);
  view.executionId.textContent = state.executionId ?? '…';
  view.progress.max = Math.max(state.progress.total, 1);
  view.progress.value = state.progress.done;
  view.nodes.replaceChildren(...state.nodes.map(nodeItem));
  view.files.replaceChildren(...state.files.map(fileItem));
}

/** A run that ended without a result: cancelled by the user, or failed to start or follow. */
export function renderRunEnd(view: RunView, phase: 'cancelled' | 'error', message: string): void {
  view.section.hidden = false;
  view.section.dataset['state'] = phase;
  view.status.textContent = message;
}
