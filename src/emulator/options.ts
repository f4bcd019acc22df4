import type { Clock } from './clock.js';
import { createScaledClock } from './clock.js';
import type { CorsPolicy } from './app/cors.js';
import { newApiKey } from './ids.js';
import type { RateLimits } from './state/rate-limiter.js';
import type { WorkflowDefinition } from './workflows/definition.js';

/**
 * Which behaviour to play: `service` follows docs/service.md (the service as it really is); `spec`
 * follows the published spec as written (404 business errors, growing message content, top-level
 * run variables accepted, documented statuses only).
 */
export type Profile = 'service' | 'spec';

/**
 * Which web pages may call the emulator from a browser (CORS): their origins, or `'*'` for every page.
 *
 * @example
 * const emulator = await createEmulator({ cors: { origins: ['http://localhost:5173'] } });
 */
export interface EmulatorCors {
  /** Page origins (`scheme://host:port`) whose scripts may call the API and read its rate-limit headers, or `'*'`. */
  readonly origins: readonly string[] | '*';
}

/**
 * Options of {@link createEmulator}. Every one is optional.
 *
 * @example
 * const emulator = await createEmulator({ speed: 50, rateLimit: { perMinute: 10 } });
 */
export interface EmulatorOptions {
  /** Behaviour to play. Default `'service'`. */
  readonly profile?: Profile;
  /**
   * Time acceleration: emulator milliseconds per real millisecond. Default 1. `speed: 50` makes a
   * 10 s node take 200 ms. Ignored when `clock` is given.
   */
  readonly speed?: number;
  /** A clock to use instead, e.g. `createManualClock()` to drive time by hand in tests. */
  readonly clock?: Clock;
  /**
   * The account budget (service.md §2.1). Default 100 per minute and 10 000 per day; `false` turns it
   * off (no 429s and no `X-RateLimit-*` headers).
   */
  readonly rateLimit?: { readonly perMinute?: number; readonly perDay?: number } | false;
  /** Workflows to add at start, after the samples. */
  readonly workflows?: readonly WorkflowDefinition[];
  /** Whether to include the built-in sample catalogue. Default true. */
  readonly samples?: boolean;
  /** Port on 127.0.0.1. Default 0: an ephemeral port. */
  readonly port?: number;
  /** Whether to serve HTTP at all. Default true; false serves only the in-process `fetch`. */
  readonly listen?: boolean;
  /** The account's API key. Default: a generated `rf_` + 32 base62 characters. */
  readonly apiKey?: string;
  /**
   * Which web pages may call the emulator from a browser. Default in the `service` profile: none, as the
   * service answers no page but its own (a browser refuses a page's calls: the preflight allows nothing
   * and answers carry no `Access-Control-Allow-Origin`). Default in the `spec` profile: every page
   * (`{ origins: '*' }`): the spec says nothing of it. Servers and Node clients send no
   * `Origin` and are never refused.
   */
  readonly cors?: EmulatorCors;
}

/** Options with every default applied. */
export interface ResolvedOptions {
  readonly profile: Profile;
  readonly clock: Clock;
  readonly rateLimit: RateLimits | undefined;
  readonly workflows: readonly WorkflowDefinition[];
  readonly samples: boolean;
  readonly port: number;
  readonly listen: boolean;
  readonly apiKey: string;
  readonly cors: CorsPolicy;
}

/** Every default, in one place. */
const DEFAULTS = {
  profile: 'service',
  speed: 1,
  // service.md §2.1: the service's account budget.
  rateLimit: { perMinute: 100, perDay: 10_000 },
  samples: true,
  port: 0,
  listen: true,
  // service.md §1.7: the service answers CORS for no page but its own; the spec says nothing of CORS.
  cors: { service: { origins: [] }, spec: { origins: '*' } } satisfies Record<Profile, CorsPolicy>,
} as const;

/** Every option `createEmulator` takes. */
const OPTION_NAMES: readonly string[] = ['profile', 'speed', 'clock', 'rateLimit', 'workflows', 'samples', 'port', 'listen', 'apiKey', 'cors'] satisfies readonly (keyof EmulatorOptions)[];

/** Applies the defaults, once, in one place. */
export function resolveOptions(options: EmulatorOptions): ResolvedOptions {
  // From JavaScript nothing checks the names: `rateLimt: false` would leave the account's limits on, unsaid.
  for (const key of Object.keys(options)) {
    if (!OPTION_NAMES.includes(key)) throw new TypeError(`createEmulator has no option "${key}" (options: ${OPTION_NAMES.join(', ')})`);
  }
  const given: unknown = options.profile;
  if (given !== undefined && given !== 'service' && given !== 'spec') throw new RangeError(`profile must be 'service' or 'spec' (got ${JSON.stringify(given)})`);
  const apiKey = options.apiKey ?? newApiKey();
  // service.md §1.6: a key that does not start with `rf_` could never authenticate.
  if (!apiKey.startsWith('rf_')) throw new RangeError('apiKey must start with "rf_"');
  const limits = options.rateLimit;
  const rateLimit =
    limits === false
      ? undefined
      : { perMinute: limits?.perMinute ?? DEFAULTS.rateLimit.perMinute, perDay: limits?.perDay ?? DEFAULTS.rateLimit.perDay };
  const profile = options.profile ?? DEFAULTS.profile;
  return {
    profile,
    clock: options.clock ?? createScaledClock(options.speed ?? DEFAULTS.speed),
    rateLimit,
    workflows: options.workflows ?? [],
    samples: options.samples ?? DEFAULTS.samples,
    port: options.port ?? DEFAULTS.port,
    listen: options.listen ?? DEFAULTS.listen,
    apiKey,
    cors: corsPolicy(options.cors) ?? DEFAULTS.cors[profile],
  };
}

function corsPolicy(cors: EmulatorCors | undefined): CorsPolicy | undefined {
  if (cors === undefined) return undefined;
  const origins: unknown = (cors as { readonly origins?: unknown }).origins;
  if (origins === '*') return { origins };
  const list: readonly unknown[] = Array.isArray(origins) ? origins : [undefined];
  if (!list.every((origin): origin is string => typeof origin === 'string' && /^[a-z][a-z0-9+.-]*:\/\/[^/]+$/iu.test(origin))) {
    throw new TypeError(`cors.origins must be '*' or a list of page origins such as 'http://localhost:5173' (got ${JSON.stringify(origins)})`);
  }
  return { origins: [...list] };
}
