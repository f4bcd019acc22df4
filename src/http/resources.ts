import { map, type Observable } from 'rxjs';
import { InvalidArgumentError, isRecord, knownKeys, objectArgument, pathSegment, ResponseValidationError, shownType } from '../errors/validation-errors.js';
import { UploadIncompleteError } from '../errors/upload-incomplete-error.js';
import type { ExecutionOutput, ExecutionSnapshot, GeneratedWorkflow, Logger, UploadedFile, Variables, WorkflowPlan, WorkflowSummary } from '../domain/model.js';
import { planSchema, type PlanSchema } from '../domain/plan-schema.js';
import type { CallOptions, ExecutionsApi, StartOptions } from './calls.js';
import {
  abortSchema,
  executionOutputSchema,
  snapshotDataSchema,
  withRequestedId,
  generatedWorkflowSchema,
  startedExecutionSchema,
  uploadedFilesSchema,
  workflowPlanSchema,
  workflowSummariesSchema,
  defined,
  type DataSchema,
} from './schemas.js';
import type { Placement, Transport } from './transport.js';
import { toUploadParts, type UploadSource } from './upload-source.js';

/**
 * The API's resources — workflows, executions, files, copilot — as plain Promise calls: each checks
 * its arguments, describes its request and hands it to the transport.
 */

// --- JSON bodies -----------------------------------------------------------------------------------

/** Spec §8: E2004 above 100k characters of content. */
const MAX_TEXT_CHARACTERS = 100_000;
/** Spec §8: E2005 above 100 KB of request payload. */
const MAX_BODY_BYTES = 100 * 1024;

/**
 * How deep a body may nest. Variables are text, numbers, flags and small objects (service.md §5.5);
 * anything deeper is a mistake, and far deeper would overflow the stack of whoever walks it.
 */
const MAX_JSON_DEPTH = 64;

/** A lone UTF-16 surrogate: not text, and not encodable as UTF-8 (the service would get U+FFFD). */
const LONE_SURROGATE = /\p{Cs}/u;

function isPlainObject(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function checkText(text: string, path: string, what: string): void {
  if (text.length > MAX_TEXT_CHARACTERS) throw new InvalidArgumentError(path, `is longer than ${MAX_TEXT_CHARACTERS} characters (the service's E2004)`);
  if (LONE_SURROGATE.test(text)) throw new InvalidArgumentError(path, `${what} contains a lone UTF-16 surrogate, which is not text`);
}

/**
 * Refuses what JSON cannot carry faithfully (undefined, functions, symbols, bigints, NaN/Infinity,
 * class instances such as Date or Map, cycles, lone surrogates), nesting deeper than
 * `MAX_JSON_DEPTH`, and strings the service would reject (E2004). `ancestors` are the objects it is
 * inside: at most `MAX_JSON_DEPTH`, so however deep the input, the walk's own depth stays small.
 */
function checkValue(value: unknown, path: string, ancestors: object[] = []): void {
  switch (typeof value) {
    case 'string':
      checkText(value, path, 'the value');
      return;
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new InvalidArgumentError(path, `${String(value)} is not representable in JSON`);
      return;
    case 'object': {
      if (value === null) return;
      if (ancestors.includes(value)) throw new InvalidArgumentError(path, 'contains a cycle');
      const isArray = Array.isArray(value);
      if (!isArray && !isPlainObject(value)) throw new InvalidArgumentError(path, 'must be a plain object, array or primitive');
      if (ancestors.length >= MAX_JSON_DEPTH) throw new InvalidArgumentError(path, `nests deeper than ${MAX_JSON_DEPTH} levels`);
      const entries = Object.entries(value as Record<string, unknown>);
      if (!isArray) for (const [key] of entries) checkText(key, `${path}.${key}`, 'the name');
      ancestors.push(value);
      for (const [key, entry] of entries) checkValue(entry, isArray ? `${path}[${key}]` : `${path}.${key}`, ancestors);
      ancestors.pop();
      return;
    }
    case 'undefined':
    case 'function':
    case 'symbol':
    case 'bigint':
      throw new InvalidArgumentError(path, `a ${typeof value} is not JSON-serialisable`);
  }
}

/** `JSON.stringify`, typed as it behaves: `undefined` for a value JSON has no text for. */
const serialise: (value: unknown) => string | undefined = JSON.stringify;

/**
 * Checks that `value` is plain JSON and that its encoding stays under the service's 100 KB body limit
 * (E2005); returns the exact JSON text that will be sent. The value is serialised once, and what is
 * checked is what was serialised (read back), so a getter that answers differently the second time
 * cannot slip past the checks.
 */
function encodeJsonBody(argument: string, value: unknown): string {
  // First on what was given, for errors that name the culprit (undefined, a Date, a cycle, the depth)…
  checkValue(value, argument);
  let json: string | undefined;
  try {
    json = serialise(value);
  } catch (error) {
    // A getter that now returns a cycle or something far deeper than it did a moment ago.
    throw new InvalidArgumentError(argument, `could not be serialised as JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (json === undefined) throw new InvalidArgumentError(argument, 'is not JSON-serialisable');
  const bytes = new TextEncoder().encode(json).byteLength;
  if (bytes > MAX_BODY_BYTES) throw new InvalidArgumentError(argument, `encodes to ${bytes} bytes, over the service's 100 KB limit (E2005)`);
  // …then on exactly the text that will be sent.
  checkValue(JSON.parse(json), argument);
  return json;
}

// --- workflows (spec §4.5–4.6) ---------------------------------------------------------------------

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
  /**
   * The schema of a workflow's variables, from its plan (`planSchema(await get(canvasId))`): a zod/mini
   * object schema, a Standard Schema, convertible to JSON Schema with zod's `z.toJSONSchema`.
   *
   * @example
   * ```ts
   * const schema = await client.workflows.schema('c-123');
   * const checked = schema.safeParse(form);
   * ```
   */
  schema(canvasId: string, options?: CallOptions): Promise<PlanSchema>;
}

const DEFAULT_PAGE_SIZE = 20;
const DEFAULT_MAX_PAGES = 1_000;
/** Larger sizes are clamped by the service (service.md §5.1), which would make `list` stop after one page. */
const MAX_PAGE_SIZE = 100;

function checkInteger(argument: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw new InvalidArgumentError(argument, `must be an integer from ${min} to ${max} (got ${String(value)})`);
  return value;
}

function searchParams({ keyword, order, page, pageSize }: SearchQuery): Record<string, string | number> {
  if (keyword !== undefined && typeof keyword !== 'string') throw new InvalidArgumentError('keyword', 'must be a string');
  if (order !== undefined && !(WORKFLOW_ORDERS as readonly string[]).includes(order)) throw new InvalidArgumentError('order', `must be one of ${WORKFLOW_ORDERS.join(', ')}`);
  return defined({
    keyword: keyword === '' ? undefined : keyword,
    order,
    page: page === undefined ? undefined : checkInteger('page', page, 1, Number.MAX_SAFE_INTEGER),
    pageSize: pageSize === undefined ? undefined : checkInteger('pageSize', pageSize, 1, MAX_PAGE_SIZE),
  });
}

/** Builds the workflows resource on the client's transport. */
export function createWorkflowsApi({ call }: Transport): WorkflowsApi {
  const search = (query?: SearchQuery, options?: CallOptions): Promise<WorkflowSummary[]> =>
    call(options, () => ({ endpoint: 'search', path: 'openapi/workflows', searchParams: searchParams(objectArgument('query', query)), schema: workflowSummariesSchema }));

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

  const get = (canvasId: string, options?: CallOptions): Promise<WorkflowPlan> =>
    call(options, () => ({ endpoint: 'detail', path: `openapi/workflows/${pathSegment('canvasId', canvasId)}`, schema: workflowPlanSchema }));

  return {
    search,
    list,
    get,
    schema: async (canvasId: string, options?: CallOptions) => planSchema(await get(canvasId, options)),
  };
}

// --- executions (spec §4.1–4.4) -------------------------------------------------------------------

/**
 * Warns about text values the service will misread as file keys: any string starting with `of_` is
 * taken as an uploaded fileKey (service.md §5.5), so `of_course` silently becomes a missing file. Keys
 * this client uploaded are known and pass quietly; arrays are checked element by element, because an
 * array is a file list only when every element is a key.
 */
function warnAboutFileKeyLookalikes(variables: Variables, uploaded: ReadonlySet<string>, logger: Logger | undefined): void {
  if (logger === undefined) return;
  for (const [name, value] of Object.entries(variables)) {
    const texts = Array.isArray(value) ? value : [value];
    for (const text of texts) {
      if (typeof text === 'string' && text.startsWith('of_') && !uploaded.has(text)) {
        logger.warn(
          `flowstream: variable "${name}" starts with "of_" but is not a file this client uploaded; the service will read it as a fileKey (service.md §5.5)`,
          { variable: name },
        );
      }
    }
  }
}

/** What the executions resource shares with the rest of the client. */
export interface ExecutionsContext {
  readonly transport: Transport;
  readonly logger: Logger | undefined;
  /** File keys this client uploaded (see `warnAboutFileKeyLookalikes`). */
  readonly uploadedKeys: ReadonlySet<string>;
}

function checkVariables(variables: unknown): asserts variables is Variables {
  if (!isRecord(variables)) {
    throw new InvalidArgumentError('variables', 'must be an object of name → value');
  }
}

/**
 * An execution's reads as Observables, for the run layer: one request per subscription, cancelled by
 * unsubscribing — no AbortSignal, Promise or listener per read (thousands of runs each keep one
 * waiting in the budget).
 */
export interface ExecutionReads {
  /** `placement`: the read's class in the budget and the parent of its telemetry, as the run layer asks. */
  status(executionId: string, placement?: Placement): Observable<ExecutionSnapshot>;
  output(executionId: string, placement?: Placement): Observable<ExecutionOutput>;
}

/** The reads of each executions API this layer made (see {@link executionReads}). */
const READS = new WeakMap<ExecutionsApi, ExecutionReads>();

/**
 * The Observable reads of `api` when this client's http layer made it, else `undefined` (an
 * `ExecutionsApi` of the caller's own, read through its Promises).
 */
export function executionReads(api: ExecutionsApi): ExecutionReads | undefined {
  return READS.get(api);
}

/**
 * The execution endpoints (spec §4.1–4.4): the {@link ExecutionsApi} seam the run layer polls through.
 * Errors of status/output/abort carry the `executionId`.
 */
export function createExecutionsApi(context: ExecutionsContext): ExecutionsApi {
  const { call, request } = context.transport;
  /** One request on an existing execution: keyed by its id for the budget, its errors carry the id. */
  const onExecution =
    <T>(endpoint: 'status' | 'output' | 'abort', executionId: string, schema: DataSchema<T>) =>
    () => ({ endpoint, path: `openapi/workflow/${pathSegment('executionId', executionId)}/${endpoint}`, key: executionId, executionId, schema });
  const api: ExecutionsApi = {
    start: (canvasId: string, input?: { readonly variables?: Variables }, options?: StartOptions) =>
      call(options, () => {
        const segment = pathSegment('canvasId', canvasId);
        const { onSending } = objectArgument('options', options);
        const variables = objectArgument('input', input).variables ?? {};
        checkVariables(variables);
        // service.md §5.4: the service rejects top-level variables, so the wrapper is always sent.
        const json = encodeJsonBody('variables', { variables });
        warnAboutFileKeyLookalikes(variables, context.uploadedKeys, context.logger);
        return {
          endpoint: 'run',
          path: `openapi/workflow/${segment}/run`,
          body: json,
          // Identical starts (same canvas, same exact body) share a key in the budget (service.md §2.2).
          key: `${canvasId}\n${json}`,
          schema: startedExecutionSchema,
          onSending,
        };
      }),
    status: (executionId, options) => call(options, onExecution('status', executionId, snapshotDataSchema)).then((data) => withRequestedId(data, executionId)),
    output: (executionId, options) => call(options, onExecution('output', executionId, executionOutputSchema)),
    abort: (executionId, options) => call(options, onExecution('abort', executionId, abortSchema)),
  };
  READS.set(api, {
    status: (executionId, placement) => request(onExecution('status', executionId, snapshotDataSchema), placement).pipe(map((data) => withRequestedId(data, executionId))),
    output: (executionId, placement) => request(onExecution('output', executionId, executionOutputSchema), placement),
  });
  return api;
}

// --- files (spec §4.7) ------------------------------------------------------------------------------

/**
 * service.md §2.3: at most 10 files per request (11+ → 400 `Unexpected field`).
 *
 * @example
 * ```ts
 * Math.ceil(23 / UPLOAD_BATCH_SIZE); // 3 requests for 23 files
 * ```
 */
export const UPLOAD_BATCH_SIZE = 10;

/**
 * The upload endpoint (spec §4.7).
 *
 * @example
 * ```ts
 * const [report] = await client.files.upload([new File([bytes], 'report.pdf')]);
 * await client.executions.start('c-1', { variables: { report: report!.fileKey } });
 * ```
 */
export interface FilesApi {
  /** Uploads any number of files, in batches of 10; the keys come back in input order. */
  upload(files: readonly UploadSource[], options?: CallOptions): Promise<UploadedFile[]>;
}

/** Builds the files resource; every key it receives is added to `uploadedKeys`. */
export function createFilesApi({ call }: Transport, uploadedKeys: Set<string>): FilesApi {
  return {
    async upload(files: readonly UploadSource[], options?: CallOptions) {
      const parts = toUploadParts(files);
      const results: UploadedFile[] = [];
      // Batches go one after another so the result order is the input order.
      for (let start = 0; start < parts.length; start += UPLOAD_BATCH_SIZE) {
        const batch = parts.slice(start, start + UPLOAD_BATCH_SIZE);
        const form = new FormData();
        for (const part of batch) form.append('files', part.blob, part.name); // field `files`, repeated (service.md §2.3)
        try {
          const uploaded = await call(options, () => ({ endpoint: 'upload', path: 'openapi/files/upload', body: form, schema: uploadedFilesSchema }));
          if (uploaded.length !== batch.length) {
            throw new ResponseValidationError({
              endpoint: 'upload',
              reason: 'schema',
              issues: [{ path: ['data', 'files'], message: `expected ${batch.length} files, got ${uploaded.length}` }],
            });
          }
          for (const file of uploaded) uploadedKeys.add(file.fileKey);
          results.push(...uploaded);
        } catch (error) {
          // The earlier batches are on the service: their keys go with the failure, not lost with it.
          throw results.length === 0 ? error : new UploadIncompleteError(results, parts.length, error);
        }
      }
      return results;
    },
  };
}

// --- copilot (spec §4.8) ----------------------------------------------------------------------------

/**
 * The locales of spec §4.8.
 *
 * @example
 * ```ts
 * COPILOT_LOCALES.includes('fr'); // true
 * ```
 */
export const COPILOT_LOCALES = ['en', 'zh-CN', 'ja', 'zh-Hant', 'fr', 'de-DE', 'ko', 'hi', 'es', 'ru', 'de', 'it', 'tr', 'pt', 'vi', 'id', 'th', 'ar', 'mn', 'fa'] as const;
/**
 * A locale for copilot's titles: one of the documented list (spec §4.8), which editors offer as you
 * type, or any other tag. The service passes the locale on to the model without checking it, so an
 * undocumented one (`zh-Hans`, `pt-BR`) is sent as given; the client only logs a warning.
 *
 * @example
 * ```ts
 * const locale: CopilotLocale = 'zh-CN';
 * const other: CopilotLocale = 'zh-Hans'; // accepted, with a logger warning
 * ```
 */
// `string & {}` keeps the documented names as suggestions instead of widening the union to `string`.
export type CopilotLocale = (typeof COPILOT_LOCALES)[number] | (string & {});

const DOCUMENTED_LOCALES: ReadonlySet<string> = new Set(COPILOT_LOCALES);

/**
 * What to generate.
 *
 * @example
 * ```ts
 * const request: GenerateRequest = { query: 'Translate the brief', locale: 'fr', canvasId: 'c-1' };
 * ```
 */
export interface GenerateRequest {
  /** The workflow to build, in words; must not be blank (service.md §5.3). */
  readonly query: string;
  readonly locale?: CopilotLocale;
  /**
   * The workflow whose tasks and variables are **replaced, irreversibly** (service.md §5.3). Without it,
   * a new workflow is created.
   */
  readonly canvasId?: string;
}

/**
 * Copilot generation (spec §4.8). It blocks until the plan is ready, up to 300 s (service.md §2.4), and
 * is never retried after it may have reached the service: each attempt creates or replaces a workflow.
 *
 * @example
 * ```ts
 * const { canvasId } = await client.copilot.generate({ query: 'Summarise a PDF into bullet points', locale: 'en' });
 * ```
 */
export interface CopilotApi {
  generate(request: GenerateRequest, options?: CallOptions): Promise<GeneratedWorkflow>;
}

/** Each undocumented locale is logged once per client: a bot generating in `zh-Hans` all day hears it once. */
function checkLocale(locale: string | undefined, logger: Logger | undefined, warned: Set<string>): void {
  if (locale === undefined) return;
  // Typed as a string, but a JavaScript caller can pass anything.
  const given: unknown = locale;
  if (typeof given !== 'string' || given.trim() === '') throw new InvalidArgumentError('locale', 'must be a non-empty string');
  if (!DOCUMENTED_LOCALES.has(locale) && !warned.has(locale)) {
    warned.add(locale);
    logger?.warn(`flowstream: copilot locale "${locale}" is not one of the documented ones (${COPILOT_LOCALES.join(', ')}); it is sent as given`, { locale });
  }
}

function checkRequest(request: GenerateRequest, logger: Logger | undefined, warned: Set<string>): { query: string; locale?: string; canvasId?: string } {
  // Typed as required, but a JavaScript caller can leave it out.
  const given: unknown = request;
  if (given === undefined) throw new InvalidArgumentError('request', 'is required: { query, locale?, canvasId? }');
  const { query, locale, canvasId } = objectArgument('request', request);
  // A misspelt key is refused, not ignored: an ignored `canvasId` would create a new workflow where the
  // caller meant to replace one.
  knownKeys('request', request, GENERATE_KEYS);
  const text: unknown = query;
  if (typeof text !== 'string') throw new InvalidArgumentError('query', `must be the description of the workflow, a string (got ${shownType(text)})`);
  if (text.trim() === '') throw new InvalidArgumentError('query', 'must not be empty');
  if (text.length > MAX_TEXT_CHARACTERS) throw new InvalidArgumentError('query', `is longer than ${MAX_TEXT_CHARACTERS} characters (the service's E2004)`);
  checkLocale(locale, logger, warned);
  if (canvasId !== undefined) pathSegment('canvasId', canvasId);
  return { query: text, ...defined({ locale, canvasId }) };
}

const GENERATE_KEYS: readonly (keyof GenerateRequest)[] = ['query', 'locale', 'canvasId'];

/** Builds the copilot resource; `logger` hears about undocumented locales (once each). */
export function createCopilotApi({ call }: Transport, logger?: Logger): CopilotApi {
  const warned = new Set<string>();
  return {
    generate: (request: GenerateRequest, options?: CallOptions) =>
      call(options, () => ({
        endpoint: 'copilot',
        path: 'openapi/copilot/workflow/generate',
        body: encodeJsonBody('request', checkRequest(request, logger, warned)),
        schema: generatedWorkflowSchema,
      })),
  };
}
