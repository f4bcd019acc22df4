import { UsageError } from './usage-error.js';

/** Where the API is and the key to it. */
export interface Connection {
  readonly apiKey: string;
  readonly baseUrl: string;
}

/** The `--api-key` / `--base-url` flags of a command, when given. */
export interface ConnectionFlags {
  readonly apiKey?: string | undefined;
  readonly baseUrl?: string | undefined;
}

const TRY_LOCALLY = 'To try flowstream without an account, run `flowstream emulator` in another terminal and use the URL and key it prints.';

function present(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

/**
 * The connection of a command: flags first, then `FLOWSTREAM_API_KEY` / `FLOWSTREAM_BASE_URL`. A
 * missing value is a usage error that says how to provide it.
 */
export function resolveConnection(flags: ConnectionFlags, env: Readonly<Record<string, string | undefined>>): Connection {
  const apiKey = present(flags.apiKey) ?? present(env['FLOWSTREAM_API_KEY']);
  const baseUrl = present(flags.baseUrl) ?? present(env['FLOWSTREAM_BASE_URL']);
  const missing = [
    ...(apiKey === undefined ? ['No API key: set FLOWSTREAM_API_KEY or pass --api-key <key>.'] : []),
    ...(baseUrl === undefined ? ['No API address: set FLOWSTREAM_BASE_URL (it ends in /v1) or pass --base-url <url>.'] : []),
  ];
  if (apiKey === undefined || baseUrl === undefined) throw new UsageError([...missing, TRY_LOCALLY].join('\n'));
  // service.md §1.6: the service takes a token without the rf_ prefix for no key at all ("Missing API key").
  if (!apiKey.startsWith('rf_')) throw new UsageError('The API key does not start with rf_, so the service would take it for no key at all: check FLOWSTREAM_API_KEY or --api-key (copy the whole key).');
  if (!URL.canParse(baseUrl)) throw new UsageError(`The API address "${baseUrl}" is not a URL (expected something like https://host/v1).`);
  return { apiKey, baseUrl };
}
