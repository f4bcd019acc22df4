/**
 * The API's endpoints in one table (spec §2, service.md §2): everything that differs between them —
 * their request class in the budget, whether sending one twice is harmless, their default timeout —
 * is read from here, so a new endpoint is one row.
 */

/**
 * Request priorities, highest first (abort > start > interactive > a run's reads). A run's
 * status and output reads are one class in the budget, shared fairly among runs; `interactive` is for
 * calls a person waits on (detail, upload, copilot, search).
 *
 * @example
 * ```ts
 * REQUEST_PRIORITIES.indexOf('interactive') < REQUEST_PRIORITIES.indexOf('status'); // true
 * ```
 */
export const REQUEST_PRIORITIES = ['abort', 'start', 'interactive', 'status', 'output'] as const;

/**
 * One of the request priorities, highest first in {@link REQUEST_PRIORITIES}.
 *
 * @example
 * ```ts
 * const priority: RequestPriority = 'start';
 * ```
 */
export type RequestPriority = (typeof REQUEST_PRIORITIES)[number];

/**
 * The classes a caller may give a plain call (`CallOptions.priority`): `interactive`, a person waits
 * on it; `status`, it may wait its turn among the runs' reads. Abort and start are not offered: they
 * may use the day's reserve and an abort skips the pacing, which only those endpoints earn.
 *
 * @example
 * ```ts
 * await client.executions.status(executionId, { priority: 'interactive' });
 * ```
 */
export type CallPriority = (typeof CALL_PRIORITIES)[number];

/** Every {@link CallPriority}, highest first. */
export const CALL_PRIORITIES = ['interactive', 'status'] as const satisfies readonly RequestPriority[];

/** What the client must know of one endpoint. */
interface EndpointTraits {
  readonly method: 'get' | 'post';
  readonly priority: RequestPriority;
  /** Whether sending the same request twice has the same effect as sending it once (service.md §2.2). */
  readonly repeatable: boolean;
  /** Its own default timeout, when the common one does not fit. */
  readonly timeoutMs?: number;
}

/**
 * The endpoints, as named in logs, errors, the budget and the emulator's request log.
 */
export const ENDPOINTS = {
  // A second start runs the workflow twice, or meets the 1 s duplicate guard (service.md §2.2).
  run: { method: 'post', priority: 'start', repeatable: false },
  // Aborting twice is harmless: a finished or failed execution "succeeds silently" (service.md §3.5).
  abort: { method: 'post', priority: 'abort', repeatable: true },
  status: { method: 'get', priority: 'status', repeatable: true },
  output: { method: 'get', priority: 'output', repeatable: true },
  // A person waits on these: they go ahead of the runs' polls.
  search: { method: 'get', priority: 'interactive', repeatable: true },
  detail: { method: 'get', priority: 'interactive', repeatable: true },
  // Uploads are content-addressed: the same bytes give the same key again (service.md §5.6). Up to 10
  // files of 50 MiB each per request (§2.3) need more than the common timeout.
  upload: { method: 'post', priority: 'interactive', repeatable: true, timeoutMs: 120_000 },
  // Generation creates a workflow even when it then fails (service.md §5.3): a retry would create
  // another. It blocks up to 300 s (§2.4); 30 s more covers the transfer.
  copilot: { method: 'post', priority: 'interactive', repeatable: false, timeoutMs: 330_000 },
} as const satisfies Readonly<Record<string, EndpointTraits>>;

/**
 * The API's endpoints, as named in logs, errors, the budget and the emulator's request log.
 *
 * @example
 * ```ts
 * const endpoint: Endpoint = 'status';
 * ```
 */
export type Endpoint = keyof typeof ENDPOINTS;

/** Every endpoint name, in the table's order. */
export const ENDPOINT_NAMES = Object.keys(ENDPOINTS) as readonly Endpoint[];

/** The request class an endpoint's requests take in the budget. */
export function priorityOf(endpoint: Endpoint): RequestPriority {
  return ENDPOINTS[endpoint].priority;
}

/** Whether a failed request of this endpoint may be sent again without risk of doing its work twice. */
export function isRepeatable(endpoint: Endpoint): boolean {
  return ENDPOINTS[endpoint].repeatable;
}

/** The endpoint's own default timeout, when the common one does not fit it. */
export function ownTimeoutMs(endpoint: Endpoint): number | undefined {
  const traits: EndpointTraits = ENDPOINTS[endpoint];
  return traits.timeoutMs;
}
