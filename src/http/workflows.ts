import { InvalidArgumentError } from '../errors/validation-errors.js';
import { callOptions } from './call-options.js';
import type { CallOptions } from './calls.js';
import type { WorkflowPlan, WorkflowSummary } from '../domain/model.js';
import { objectArgument } from './object-argument.js';
import { pathSegment } from './path-segment.js';
import { workflowPlanSchema, workflowSummariesSchema } from './schemas/workflow.js';
import type { Send } from './transport.js';

/**
 * Sort orders the service knows; anything else silently means `updationDesc` (service.md §5.1).
 *
 * @example
 * ```ts
 * await client.workflows.search({ order: WORKFLOW_ORDERS[0] });
 * ```
 */
export const WORKFLOW_ORDERS = ['creationAsc', 'creationDesc', 'updationAsc', 'updationDesc'] as const;
/**
 * A sort order of search (service.md §5.1).
 *
 * @example
 * ```ts
 * const order: WorkflowOrder = 'creationDesc';
 * ```
 */
export type WorkflowOrder = (typeof WORKFLOW_ORDERS)[number];

/**
 * One page of a search (spec §4.5).
 *
 * @example
 * ```ts
 * await client.workflows.search({ keyword: 'report', page: 2, pageSize: 50 });
 * ```
 */
export interface SearchQuery {
  readonly keyword?: string;
  readonly order?: WorkflowOrder;
  /** 1-based; default 1. */
  readonly page?: number;
  /** 1 to 100; the service's default is 20 (service.md §5.1). */
  readonly pageSize?: number;
}

/**
 * Every page of a search.
 *
 * @example
 * ```ts
 * for await (const w of client.workflows.list({ keyword: 'report', pageSize: 100 })) console.log(w.title);
 * ```
 */
export interface ListQuery extends Omit<SearchQuery, 'page'> {
  /**
   * The most pages read (default 1,000: 100,000 workflows at the largest page size). A server that
   * ignored `page` would otherwise be read for ever; `list` also stops when a page repeats the last.
   */
  readonly maxPages?: number;
}

/**
 * The workflow endpoints (spec §4.5–4.6).
 *
 * @example
 * ```ts
 * for await (const workflow of client.workflows.list({ keyword: 'report' })) console.log(workflow.title);
 * ```
 */
export interface WorkflowsApi {
  /** One page of workflows whose title contains `keyword` (case-insensitive). */
  search(query?: SearchQuery, options?: CallOptions): Promise<WorkflowSummary[]>;
  /**
   * Every matching workflow, page by page; stops at the first page shorter than `pageSize` (service.md
   * §5.1), at a page that repeats the one before, or after `maxPages`.
   */
  list(query?: ListQuery, options?: CallOptions): AsyncIterable<WorkflowSummary>;
  /** A workflow's plan: title, tasks and variables. */
  get(canvasId: string, options?: CallOptions): Promise<WorkflowPlan>;
}

const DEFAULT_PAGE_SIZE = 20;
const DEFAULT_MAX_PAGES = 1_000;
/** Larger sizes are clamped by the service (service.md §5.1), which would make `list` stop after one page. */
const MAX_PAGE_SIZE = 100;

function checkInteger(argument: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw new InvalidArgumentError(argument, `must be an integer from ${min} to ${max} (got ${String(value)})`);
  return value;
}

function searchParams(query: SearchQuery): Record<string, string | number> {
  if (query.keyword !== undefined && typeof query.keyword !== 'string') throw new InvalidArgumentError('keyword', 'must be a string');
  if (query.order !== undefined && !(WORKFLOW_ORDERS as readonly string[]).includes(query.order)) {
    throw new InvalidArgumentError('order', `must be one of ${WORKFLOW_ORDERS.join(', ')}`);
  }
  return {
    ...(query.keyword === undefined || query.keyword === '' ? {} : { keyword: query.keyword }),
    ...(query.order === undefined ? {} : { order: query.order }),
    ...(query.page === undefined ? {} : { page: checkInteger('page', query.page, 1, Number.MAX_SAFE_INTEGER) }),
    ...(query.pageSize === undefined ? {} : { pageSize: checkInteger('pageSize', query.pageSize, 1, MAX_PAGE_SIZE) }),
  };
}

/** Builds the workflows resource on the client's `send`. */
export function createWorkflowsApi(send: Send): WorkflowsApi {
  const search = async (query?: SearchQuery, options?: CallOptions): Promise<WorkflowSummary[]> =>
    send({
      endpoint: 'search',
      method: 'get',
      path: 'openapi/workflows',
      searchParams: searchParams(objectArgument('query', query)),
      schema: workflowSummariesSchema,
      ...callOptions(options),
    });

  async function* list(query?: ListQuery, options?: CallOptions): AsyncGenerator<WorkflowSummary, void, undefined> {
    const { maxPages = DEFAULT_MAX_PAGES, ...rest } = objectArgument('query', query);
    const pageSize = rest.pageSize ?? DEFAULT_PAGE_SIZE;
    checkInteger('maxPages', maxPages, 1, Number.MAX_SAFE_INTEGER);
    let previous = '';
    for (let page = 1; page <= maxPages; page += 1) {
      const items = await search({ ...rest, page, pageSize }, options);
      // A page with the same workflows as the one before is a server ignoring `page`: what follows
      // would only repeat it (and never end).
      const ids = items.map((item) => item.canvasId).join('\n');
      if (page > 1 && ids === previous) return;
      previous = ids;
      yield* items;
      // service.md §5.1: no total is sent; the last page is the first one shorter than pageSize.
      if (items.length < pageSize) return;
    }
  }

  return {
    search,
    list,
    async get(canvasId: string, options?: CallOptions) {
      const segment = pathSegment('canvasId', canvasId);
      return send({ endpoint: 'detail', method: 'get', path: `openapi/workflows/${segment}`, schema: workflowPlanSchema, ...callOptions(options) });
    },
  };
}
