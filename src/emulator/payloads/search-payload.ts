import type { StoredWorkflow } from '../state/workflow-registry.js';

/** service.md §5.1: the orders search accepts; anything else means `updationDesc`. */
export type SearchOrder = 'creationAsc' | 'creationDesc' | 'updationAsc' | 'updationDesc';

const ORDERS: readonly SearchOrder[] = ['creationAsc', 'creationDesc', 'updationAsc', 'updationDesc'];
const DEFAULT_PAGE_SIZE = 20;
const MAX_PAGE_SIZE = 100;

/** The `data` of search: one page as a bare array, no total (service.md §5.1). */
export function searchPayload(workflows: readonly StoredWorkflow[], query: URLSearchParams): Record<string, unknown>[] {
  const keyword = (query.get('keyword') ?? '').toLowerCase();
  const order = ORDERS.find((candidate) => candidate === query.get('order')) ?? 'updationDesc';
  const page = positiveInteger(query.get('page')) ?? 1;
  const pageSize = Math.min(positiveInteger(query.get('pageSize')) ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  return workflows
    .map((stored) => ({ stored, title: stored.workflow.title === '' ? 'Untitled' : stored.workflow.title }))
    .filter(({ title }) => title.toLowerCase().includes(keyword))
    .sort((a, b) => compare(a.stored, b.stored, order))
    .slice((page - 1) * pageSize, page * pageSize)
    .map(({ stored, title }) => ({ canvasId: stored.workflow.canvasId, title }));
}

/** Orders by the chosen time, then by insertion so that equal times keep a stable order. */
function compare(a: StoredWorkflow, b: StoredWorkflow, order: SearchOrder): number {
  const direction = order.endsWith('Asc') ? 1 : -1;
  const time = (stored: StoredWorkflow): number => (order.startsWith('creation') ? stored.createdAt : stored.updatedAt);
  const byTime = time(a) - time(b);
  return direction * (byTime === 0 ? a.sequence - b.sequence : byTime);
}

function positiveInteger(text: string | null): number | undefined {
  if (text === null) return undefined;
  const value = Number(text);
  return Number.isInteger(value) && value >= 1 ? value : undefined;
}
