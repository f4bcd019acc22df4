import type { GateTicket } from '../domain/requests.js';

/**
 * A request let through whose report has not come yet, and when it left: the service's window that
 * counts it began at most 60 s before it arrived, and it arrived within the latency allowance of
 * `sentAt` — the anchor for every "until the window can have reset" (service.md §2.1).
 *
 * @example
 * ```ts
 * const request: InFlightRequest = { ticket: { endpoint: 'status', priority: 'status', key: 'we-1' }, sentAt: 1_000 };
 * ```
 */
export interface InFlightRequest {
  readonly ticket: GateTicket;
  readonly sentAt: number;
}

/**
 * The requests in flight, grouped by what they ask (endpoint, priority, key), so that settling a
 * report looks only at its own kind: O(1) for the usual single request per run and endpoint.
 */
export class InFlight {
  readonly #byKind = new Map<string, InFlightRequest[]>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  add(ticket: GateTicket, sentAt: number): void {
    const name = kindOf(ticket);
    const requests = this.#byKind.get(name);
    if (requests === undefined) this.#byKind.set(name, [{ ticket, sentAt }]);
    else requests.push({ ticket, sentAt });
    this.#size += 1;
  }

  /**
   * Takes out the request `ticket` reports on and says when it was sent. Matched by identity first
   * (the http layer reports the ticket it acquired with), then by endpoint, priority and key, oldest
   * first; `undefined` for a report nothing matches.
   */
  settle(ticket: GateTicket): number | undefined {
    const name = kindOf(ticket);
    const requests = this.#byKind.get(name);
    if (requests === undefined) return undefined;
    const same = requests.findIndex((request) => request.ticket === ticket);
    const [settled] = requests.splice(same < 0 ? 0 : same, 1);
    if (requests.length === 0) this.#byKind.delete(name);
    this.#size -= 1;
    return settled?.sentAt;
  }
}

function kindOf(ticket: GateTicket): string {
  return `${ticket.endpoint}\u0000${ticket.priority}\u0000${ticket.key === undefined ? '-' : `=${ticket.key}`}`;
}
