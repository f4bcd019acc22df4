import type { EndpointName } from '../app/route.js';

/**
 * What a fault does to a matching request.
 * - `latency`: waits `ms` real milliseconds before handling (combines with other faults).
 * - `status`: answers `status` (typically 5xx) with a framework error body, or `body` verbatim;
 *   with `after: true` the request is handled first (its effects happen) and only the answer is lost.
 * - `drop`: destroys the connection (over HTTP) or rejects with a `TypeError` (in-process `fetch`);
 *   `after: true` as above.
 * - `malformed`: the JSON answer is cut in half, so it no longer parses.
 * - `drift`: schema drift in a JSON answer: every `status` value replaced by `unknownStatus`
 *   (default `paused`) and, unless `extraFields: false`, an extra field in every object.
 * - `rate-limit`: a 429 before handling; `variant: 'account'` (default) is the account-limit body
 *   and headers of service.md §2.1, `'throttler'` the IP throttler's bare JSON string with
 *   `Retry-After: retryAfterSeconds` (default 60) (service.md §1.3).
 * - `internal`: an unexpected server fault, answered as `E0000` (service.md §1.2).
 */
export type FaultEffect =
  | { readonly kind: 'latency'; readonly ms: number }
  | { readonly kind: 'status'; readonly status: number; readonly body?: string; readonly after?: boolean }
  | { readonly kind: 'drop'; readonly after?: boolean }
  | { readonly kind: 'malformed' }
  | { readonly kind: 'drift'; readonly unknownStatus?: string; readonly extraFields?: boolean }
  | { readonly kind: 'rate-limit'; readonly variant?: 'account' | 'throttler'; readonly retryAfterSeconds?: number }
  | { readonly kind: 'internal' };

/** Where and how often a fault applies. */
export interface FaultScope {
  /** Endpoints it applies to; default every request (files and preflights included). */
  readonly endpoint?: EndpointName | readonly EndpointName[];
  /** How many matching requests it applies to; default unlimited. */
  readonly times?: number;
  /** How many matching requests it lets through before it applies (the third upload of a batched one: 2); default 0. */
  readonly skip?: number;
  /** Default true. */
  readonly enabled?: boolean;
}

/**
 * A fault to inject.
 *
 * @example
 * emulator.faults.add({ kind: 'status', status: 503, endpoint: 'status', times: 2 });
 */
export type FaultSpec = FaultEffect & FaultScope;

/** A fault in place: switch it at runtime or remove it. */
export interface FaultHandle {
  readonly id: string;
  readonly spec: FaultSpec;
  /** Whether it currently applies (enabled and not used up). */
  readonly active: boolean;
  /** How many requests it has applied to. */
  readonly hits: number;
  /** Uses left, or undefined when unlimited. */
  readonly remaining: number | undefined;
  enable(): void;
  disable(): void;
  remove(): void;
}

class Fault implements FaultHandle {
  #enabled: boolean;
  #hits = 0;
  #skipped = 0;
  readonly id: string;
  readonly spec: FaultSpec;
  readonly #registry: FaultRegistry;

  constructor(id: string, spec: FaultSpec, registry: FaultRegistry) {
    this.id = id;
    this.spec = spec;
    this.#registry = registry;
    this.#enabled = spec.enabled ?? true;
  }

  get hits(): number {
    return this.#hits;
  }
  get remaining(): number | undefined {
    return this.spec.times === undefined ? undefined : Math.max(0, this.spec.times - this.#hits);
  }
  get active(): boolean {
    return this.#enabled && this.remaining !== 0;
  }
  enable(): void {
    this.#enabled = true;
  }
  disable(): void {
    this.#enabled = false;
  }
  remove(): void {
    this.#registry.remove(this.id);
  }

  /** Counts a use when the fault applies to `endpoint`. */
  claim(endpoint: EndpointName): boolean {
    const endpoints = this.spec.endpoint === undefined ? undefined : ([] as readonly EndpointName[]).concat(this.spec.endpoint);
    if (!this.active || !(endpoints?.includes(endpoint) ?? true)) return false;
    if (this.#skipped < (this.spec.skip ?? 0)) {
      this.#skipped += 1;
      return false;
    }
    this.#hits += 1;
    return true;
  }
}

/** The faults in place, in the order they were added. */
export class FaultRegistry {
  readonly #faults = new Map<string, Fault>();
  #counter = 0;

  add(spec: FaultSpec): FaultHandle {
    validate(spec);
    this.#counter += 1;
    const fault = new Fault(`fault-${String(this.#counter)}`, spec, this);
    this.#faults.set(fault.id, fault);
    return fault;
  }

  list(): FaultHandle[] {
    return [...this.#faults.values()];
  }

  remove(id: string): boolean {
    return this.#faults.delete(id);
  }

  clear(): void {
    this.#faults.clear();
  }

  /** The faults that apply to one request to `endpoint`, each counted as used. */
  claim(endpoint: EndpointName): FaultHandle[] {
    return [...this.#faults.values()].filter((fault) => fault.claim(endpoint));
  }
}

function validate(spec: FaultSpec): void {
  if (spec.times !== undefined && !(Number.isInteger(spec.times) && spec.times >= 0)) throw new RangeError('fault times must be a non-negative integer');
  if (spec.skip !== undefined && !(Number.isInteger(spec.skip) && spec.skip >= 0)) throw new RangeError('fault skip must be a non-negative integer');
  if (spec.kind === 'latency' && !(spec.ms >= 0)) throw new RangeError('latency ms must be non-negative');
  if (spec.kind === 'status' && !(Number.isInteger(spec.status) && spec.status >= 400 && spec.status <= 599)) {
    throw new RangeError('a status fault answers an HTTP status from 400 to 599');
  }
}
