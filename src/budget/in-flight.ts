import type { GateTicket } from '../domain/requests.js';

/**
 * A request let through whose report has not come yet, and when it left: the service's window that
 * counts it began at most 60 s before it arrived, and it arrived within the latency allowance of
 * `sentAt` — the anchor for every "until the window can have reset" (PROTOCOL §2.1).
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
 * The in-flight requests without the one `ticket` reports on, and when that one was sent. Matched by
 * identity first (the http layer reports the ticket it acquired with), then by endpoint, priority and
 * key, oldest first; `sentAt` is `undefined` for a report nothing matches.
 *
 * @example
 * ```ts
 * const { remaining, sentAt } = settleInFlight(state.inFlight, report.ticket);
 * ```
 */
export function settleInFlight(
  inFlight: readonly InFlightRequest[],
  ticket: GateTicket,
): { readonly remaining: readonly InFlightRequest[]; readonly sentAt: number | undefined } {
  let index = inFlight.findIndex((request) => request.ticket === ticket);
  if (index < 0) index = inFlight.findIndex((request) => sameTicket(request.ticket, ticket));
  const settled = inFlight[index];
  if (settled === undefined) return { remaining: inFlight, sentAt: undefined };
  return { remaining: inFlight.filter((_, position) => position !== index), sentAt: settled.sentAt };
}

function sameTicket(a: GateTicket, b: GateTicket): boolean {
  return a.endpoint === b.endpoint && a.priority === b.priority && a.key === b.key;
}
