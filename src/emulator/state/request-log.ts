import type { EndpointName } from '../app/route.js';

/** One request the emulator received, as it answered it. */
export interface RequestRecord {
  /** 1, 2, 3… in order of arrival. */
  readonly sequence: number;
  readonly method: string;
  /** Path, `/v1` included, without the query. */
  readonly path: string;
  /** The query string, `?` included, or `''`. */
  readonly query: string;
  readonly endpoint: EndpointName;
  /** HTTP status answered; 0 when the connection was dropped by a fault. */
  readonly status: number;
  /** `errCode` of an envelope with `success: false` (service.md §1.2). */
  readonly errCode: string | undefined;
  /** Emulator time at arrival (epoch ms). */
  readonly emulatorTime: number;
  /** Real time at arrival (epoch ms). */
  readonly realTime: number;
  readonly executionId: string | undefined;
  readonly canvasId: string | undefined;
  /** Ids of the faults applied to this request. */
  readonly faults: readonly string[];
}

/** Which records to list; every given field must match. */
export interface RequestFilter {
  readonly endpoint?: EndpointName | readonly EndpointName[];
  readonly method?: string;
  readonly status?: number;
  readonly executionId?: string;
  readonly canvasId?: string;
  /** Only records with a sequence greater than this. */
  readonly after?: number;
}

/** Every request received, for assertions in tests. */
export class RequestLog {
  readonly #records: RequestRecord[] = [];
  #sequence = 0;

  nextSequence(): number {
    this.#sequence += 1;
    return this.#sequence;
  }

  add(record: RequestRecord): void {
    this.#records.push(record);
  }

  list(filter: RequestFilter = {}): RequestRecord[] {
    const endpoints = filter.endpoint === undefined ? undefined : ([] as readonly EndpointName[]).concat(filter.endpoint);
    return this.#records.filter(
      (record) =>
        (endpoints?.includes(record.endpoint) ?? true) &&
        (filter.method === undefined || record.method === filter.method.toUpperCase()) &&
        (filter.status === undefined || record.status === filter.status) &&
        (filter.executionId === undefined || record.executionId === filter.executionId) &&
        (filter.canvasId === undefined || record.canvasId === filter.canvasId) &&
        (filter.after === undefined || record.sequence > filter.after),
    );
  }

  clear(): void {
    this.#records.length = 0;
  }
}
