import {
  isFlowstreamError,
  isInvalidArgumentError,
  isRunTimeoutError,
  isStartInDoubtError,
  isWorkflowFailedError,
} from '../index.js';
import type { ErrorSubject } from './describe-error.js';
import type { StopSignal } from './progress/interrupts.js';
import { isUsageError } from './usage-error.js';

/** The exit codes of `flowstream` (README "The command"). */
export const EXIT_CODES = {
  /** The command did what it was asked; a run reached `finish`. */
  ok: 0,
  /** A run ended `failed` or ran past `--timeout` (it was aborted). */
  workflowFailed: 1,
  /** `flowstream types --check`: the file is not what the plans give now. */
  outOfDate: 1,
  /** The command line or the configuration is wrong; nothing was sent. */
  usage: 2,
  /** The API or the connection to it failed. */
  api: 3,
  /** Told to stop, the command could not abort the execution: it may still be running. */
  abortFailed: 4,
  /** `run --idempotency-key`: a start with the key may have reached the service, its answer lost: nothing was started again. */
  startInDoubt: 5,
  /** A closed terminal: 128 + SIGHUP, as shells report it. */
  hungUp: 129,
  /** Ctrl-C: 128 + SIGINT. */
  interrupted: 130,
  /** `kill`, `timeout`, a cancelled CI job, a stopped container: 128 + SIGTERM. */
  terminated: 143,
} as const;

/** The exit code of a stop signal: 128 + its number, as shells report it. */
export function exitCodeOfSignal(signal: StopSignal): number {
  switch (signal) {
    case 'SIGINT':
      return EXIT_CODES.interrupted;
    case 'SIGTERM':
      return EXIT_CODES.terminated;
    case 'SIGHUP':
      return EXIT_CODES.hungUp;
    default:
      return signal satisfies never;
  }
}

/** How a command ended, before it becomes an exit code. */
export type CommandOutcome =
  | { readonly kind: 'done' }
  | { readonly kind: 'workflow-failed' }
  | { readonly kind: 'out-of-date' }
  | { readonly kind: 'interrupted'; readonly signal: StopSignal }
  | { readonly kind: 'error'; readonly error: unknown; readonly about?: ErrorSubject };

/**
 * Commander's own errors carry a `code` starting with `commander.` (it has printed them already);
 * apart from help and version (`exitCode` 0) they are all usage errors.
 */
export function isCommanderError(error: unknown): error is Error & { readonly code: string; readonly exitCode: number } {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' && error.code.startsWith('commander.');
}

function exitCodeForError(error: unknown): number {
  if (isCommanderError(error)) return error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
  if (isWorkflowFailedError(error) || isRunTimeoutError(error)) return EXIT_CODES.workflowFailed;
  if (isUsageError(error) || isInvalidArgumentError(error)) return EXIT_CODES.usage;
  if (isStartInDoubtError(error)) return EXIT_CODES.startInDoubt;
  // Every other flowstream error is the API's or the transport's: HTTP, network, timeouts, bad bodies, downloads.
  if (isFlowstreamError(error)) return EXIT_CODES.api;
  return EXIT_CODES.workflowFailed;
}

/**
 * The process exit code of a command's outcome: one pure table, so that every path of every command
 * agrees (0 finish, 1 workflow failed, 2 usage, 3 API/transport, 4 an abort that could not be sent,
 * 5 a start with an idempotency key in doubt, 128 + the signal's number when told to stop: 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).
 */
export function exitCodeFor(outcome: CommandOutcome): number {
  switch (outcome.kind) {
    case 'done':
      return EXIT_CODES.ok;
    case 'workflow-failed':
      return EXIT_CODES.workflowFailed;
    case 'out-of-date':
      return EXIT_CODES.outOfDate;
    case 'interrupted':
      return exitCodeOfSignal(outcome.signal);
    case 'error':
      return exitCodeForError(outcome.error);
    default:
      return outcome satisfies never;
  }
}
