import { STATUS_CODES } from 'node:http';
import { newTraceId } from '../ids.js';
import type { Profile } from '../options.js';

/** What a handler answers, before faults and serialization. */
export interface Reply {
  readonly status: number;
  readonly body: ReplyBody;
  readonly headers: Readonly<Record<string, string>>;
  /** What the request was about, for the request log. */
  readonly subject: Subject;
}

export type ReplyBody = { readonly json: unknown } | { readonly bytes: Uint8Array<ArrayBuffer>; readonly contentType: string } | undefined;

export interface Subject {
  readonly executionId?: string;
  readonly canvasId?: string;
}

/** Business error codes the emulator answers, with their fixed text (spec §7.3, service.md §1.2). */
export const BUSINESS_ERRORS = {
  E0000: 'An unknown error has occurred. Please try again later.',
  E1000: 'Canvas not found, please refresh',
  E1021: 'Workflow execution not found, please refresh',
} as const;

export type BusinessErrorCode = keyof typeof BUSINESS_ERRORS;

/** service.md §1.1: the success envelope. */
export function success(data: unknown, subject: Subject = {}): Reply {
  return { status: 200, body: { json: { success: true, data } }, headers: {}, subject };
}

/**
 * service.md §1.2: the service answers business errors with HTTP 200 and `success: false`. The `spec`
 * profile keeps the same envelope but sends the status the spec promises: 404 for unknown canvases
 * and executions, 500 for an unexpected fault.
 */
export function businessError(profile: Profile, code: BusinessErrorCode, subject: Subject = {}): Reply {
  const status = profile === 'service' ? 200 : code === 'E0000' ? 500 : 404;
  return { status, body: { json: { success: false, errCode: code, errMsg: BUSINESS_ERRORS[code], traceId: newTraceId() } }, headers: {}, subject };
}

/** service.md §1.3: a framework error keeps its HTTP status, body `{statusCode, message, error}`. */
export function frameworkError(status: number, message: string, extra: Readonly<Record<string, unknown>> = {}, subject: Subject = {}): Reply {
  return { status, body: { json: { statusCode: status, message, error: reasonPhrase(status), ...extra } }, headers: {}, subject };
}

export const reasonPhrase = (status: number): string => STATUS_CODES[status] ?? 'Error';

/** Adds headers to a reply. */
export const withHeaders = (reply: Reply, headers: Readonly<Record<string, string>>): Reply => ({ ...reply, headers: { ...reply.headers, ...headers } });
