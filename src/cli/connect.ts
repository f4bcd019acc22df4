import type { Command } from 'commander';
import { type Client, type ClientOptions, createClient } from '../index.js';
import { type ConnectionFlags, resolveConnection } from './connection.js';
import type { CliContext } from './context.js';
import type { ErrorSubject } from './describe-error.js';
import { ABORT_FAILED_LOG } from './pending-aborts.js';

/** Adds `--api-key` and `--base-url` to a command that talks to the API. */
export function withConnectionOptions(command: Command): Command {
  return command
    .option('--api-key <key>', 'API key (default: $FLOWSTREAM_API_KEY)')
    .option('--base-url <url>', 'API base URL ending in /v1 (default: $FLOWSTREAM_BASE_URL)');
}

/**
 * A client for the command's connection; warnings of the library go to stderr, and an abort it could
 * not send to the command's pending aborts, which say so with the execution's id.
 */
export function connect(flags: ConnectionFlags, context: CliContext, options: Pick<ClientOptions, 'idempotency'> = {}): Client {
  const { apiKey, baseUrl } = resolveConnection(flags, context.env);
  return createClient({
    ...options,
    apiKey,
    baseUrl,
    logger: {
      warn: (message, meta) => {
        const executionId = meta?.['executionId'];
        if (message === ABORT_FAILED_LOG && typeof executionId === 'string' && context.aborts !== undefined) context.aborts.fail(executionId, meta?.['error'], baseUrl);
        else context.stderr.write(`warning: ${message}\n`);
      },
    },
  });
}

/** What a failed API command was about: the ids it was given and the base URL it used. */
export function errorSubject(flags: ConnectionFlags, context: CliContext, ids: Omit<ErrorSubject, 'baseUrl'> = {}): ErrorSubject {
  const baseUrl = flags.baseUrl ?? context.env['FLOWSTREAM_BASE_URL'];
  return { ...ids, ...(baseUrl === undefined ? {} : { baseUrl: baseUrl.trim() }) };
}
