import { setTimeout as sleep } from 'node:timers/promises';
import { assertNever } from '../assert-never.js';
import type { FaultHandle } from '../state/faults.js';
import { ConnectionDropped } from './connection-dropped.js';
import type { AppContext } from './context.js';
import { drift } from './drift.js';
import type { Reply } from './reply.js';
import { businessError, frameworkError, reasonPhrase, withHeaders } from './reply.js';
import { accountLimitReply } from './rate-limit-reply.js';

/** A reply after faults, and whether its body must be sent malformed. */
export interface FaultedReply {
  readonly reply: Reply;
  readonly malformed: boolean;
}

const DEFAULT_RETRY_AFTER_SECONDS = 60;

/**
 * Applies the claimed faults around the real handling, in the order they were added: latency
 * first, then what stops a request before it reaches the service, then what spoils its answer.
 */
export async function applyFaults(faults: readonly FaultHandle[], context: AppContext, handle: () => Promise<Reply>): Promise<FaultedReply> {
  for (const fault of faults) {
    if (fault.spec.kind === 'latency') await wait(fault.spec.ms, context.closing);
  }
  let reply = intercept(faults, context);
  reply ??= await handle();
  let malformed = false;
  for (const { spec } of faults) {
    switch (spec.kind) {
      case 'latency':
      case 'rate-limit':
      case 'internal':
        break;
      case 'status':
        if (spec.after === true) reply = statusReply(spec.status, spec.body, reply);
        break;
      case 'drop':
        if (spec.after === true) throw new ConnectionDropped(reply.subject);
        break;
      case 'drift':
        if (reply.body !== undefined && 'json' in reply.body) {
          reply = { ...reply, body: { json: drift(reply.body.json, spec.unknownStatus ?? 'paused', spec.extraFields ?? true) } };
        }
        break;
      case 'malformed':
        malformed = true;
        break;
      default:
        assertNever(spec);
    }
  }
  return { reply, malformed };
}

/** The first fault that answers in place of the service, if any. */
function intercept(faults: readonly FaultHandle[], context: AppContext): Reply | undefined {
  for (const { spec } of faults) {
    if (spec.kind === 'drop' && spec.after !== true) throw new ConnectionDropped();
    if (spec.kind === 'status' && spec.after !== true) return statusReply(spec.status, spec.body, undefined);
    if (spec.kind === 'internal') return businessError(context.profile, 'E0000');
    if (spec.kind === 'rate-limit') {
      if (spec.variant === 'throttler') {
        // service.md §1.3: the IP throttler answers a bare JSON string, with Retry-After.
        const reply: Reply = { status: 429, body: { json: 'ThrottlerException: Too Many Requests' }, headers: {}, subject: {} };
        return withHeaders(reply, { 'Retry-After': String(spec.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS) });
      }
      const limits = context.rateLimiter?.limits ?? { perMinute: 100, perDay: 10_000 };
      return withHeaders(accountLimitReply('minute', limits), context.rateLimiter?.exhaustedHeaders() ?? {});
    }
  }
  return undefined;
}

function statusReply(status: number, body: string | undefined, handled: Reply | undefined): Reply {
  const subject = handled?.subject ?? {};
  if (body === undefined) return frameworkError(status, reasonPhrase(status), {}, subject);
  return { status, body: { bytes: new TextEncoder().encode(body), contentType: 'text/plain; charset=utf-8' }, headers: {}, subject };
}

async function wait(ms: number, closing: AbortSignal): Promise<void> {
  try {
    await sleep(ms, undefined, { signal: closing });
  } catch {
    // The emulator closed while the request waited: it can only be dropped.
    throw new ConnectionDropped();
  }
}
