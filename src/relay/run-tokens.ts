import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { InvalidArgumentError, pathSegment, schedulerArgument } from '../errors/validation-errors.js';
import { RunTokenError } from './run-token-error.js';

/** What a run token lets its holder do with its one execution: follow it, and maybe cancel it. */
export type RunScope = 'read' | 'cancel';

/** The scopes a token is signed with: reading always, cancelling on top. */
export type RunTokenScope = readonly ['read'] | readonly ['read', 'cancel'];

/** What a verified token says. */
export interface RunTokenClaims {
  readonly executionId: string;
  readonly scope: RunTokenScope;
  /** When the token stops being valid (ms since the epoch, on the tokens' clock). */
  readonly expiresAt: number;
}

/** Options of {@link createRunTokens}. */
export interface RunTokensOptions {
  /** The signing secret, at least 32 bytes (as UTF-8 text or bytes); keep it on the server. */
  readonly secret: string | Uint8Array;
  /** The clock of expiries (its `now()`); default real time. */
  readonly scheduler?: SchedulerLike;
}

/** What to sign: one execution, its scope, and how long the token lives. */
export interface SignRequest {
  readonly executionId: string;
  readonly scope: RunTokenScope;
  readonly ttlMs: number;
}

/** What a request needs of a token: its execution, and one scope. */
export interface VerifyRequest {
  readonly executionId: string;
  readonly scope: RunScope;
}

/** Signs and checks run tokens: short-lived, bound to one execution, never holding the API key. */
export interface RunTokens {
  sign(request: SignRequest): Promise<string>;
  /** Resolves with the token's claims, or rejects with `RunTokenError` saying why it is refused. */
  verify(token: string, request: VerifyRequest): Promise<RunTokenClaims>;
}

/** At least the HMAC-SHA256 block's half: shorter secrets can be guessed offline from one token. */
const MIN_SECRET_BYTES = 32;

const PREFIX = 'v1';

/**
 * Run tokens for a relay: HMAC-SHA256 (WebCrypto, so any runtime: Node, Deno, Bun, workers) over the
 * execution id, the scope and the expiry. A token is `v1.<claims>.<signature>` in base64url; it holds
 * no secret, and a token for one execution is refused for every other.
 *
 * @example
 * ```ts
 * const tokens = createRunTokens({ secret: process.env.RELAY_SECRET! });
 * const token = await tokens.sign({ executionId, scope: ['read'], ttlMs: 3_600_000 });
 * await tokens.verify(token, { executionId, scope: 'read' });
 * ```
 */
export function createRunTokens(options: RunTokensOptions): RunTokens {
  const given: unknown = options;
  if (typeof given !== 'object' || given === null) throw new InvalidArgumentError('options', 'must be an object with the secret');
  const secret = typeof options.secret === 'string' ? new TextEncoder().encode(options.secret) : options.secret;
  if (!(secret instanceof Uint8Array) || secret.byteLength < MIN_SECRET_BYTES) throw new InvalidArgumentError('secret', `must be at least ${MIN_SECRET_BYTES} bytes`);
  const scheduler = schedulerArgument('scheduler', options.scheduler) ?? asyncScheduler;
  const key = crypto.subtle.importKey('raw', secret.slice(), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const signatureOf = async (signed: string): Promise<Uint8Array> => new Uint8Array(await crypto.subtle.sign('HMAC', await key, new TextEncoder().encode(signed)));

  return {
    async sign(request) {
      const claims = checkedSignRequest(request, scheduler.now());
      const signed = `${PREFIX}.${toBase64Url(new TextEncoder().encode(JSON.stringify(encodeClaims(claims))))}`;
      return `${signed}.${toBase64Url(await signatureOf(signed))}`;
    },
    async verify(token, request) {
      const parts = typeof token === 'string' ? token.split('.') : [];
      const [prefix, body, signature] = parts;
      if (parts.length !== 3 || prefix !== PREFIX || body === undefined || signature === undefined) throw new RunTokenError('malformed');
      const given = fromBase64Url(signature);
      if (given === undefined) throw new RunTokenError('malformed');
      if (!equalInConstantTime(given, await signatureOf(`${prefix}.${body}`))) throw new RunTokenError('signature');
      const claims = decodeClaims(body);
      if (claims === undefined) throw new RunTokenError('malformed');
      refusal(claims, request, scheduler.now());
      return claims;
    },
  };
}

/** Throws the first reason `claims` do not allow `request` at `now`. */
function refusal(claims: RunTokenClaims, request: VerifyRequest, now: number): void {
  if (now >= claims.expiresAt) throw new RunTokenError('expired');
  if (claims.executionId !== request.executionId) throw new RunTokenError('execution');
  if (!(claims.scope as readonly RunScope[]).includes(request.scope)) throw new RunTokenError('scope');
}

function checkedSignRequest(request: SignRequest, now: number): RunTokenClaims {
  const given: unknown = request;
  if (typeof given !== 'object' || given === null) throw new InvalidArgumentError('request', 'must be { executionId, scope, ttlMs }');
  // An id no execution can have (`..`, blank, control characters) could never be followed: refused here, not as a relay failure later.
  pathSegment('executionId', request.executionId);
  const { scope, ttlMs } = checkedTokenTerms(request.scope, request.ttlMs);
  return { executionId: request.executionId, scope, expiresAt: now + ttlMs };
}

/** `scope` and `ttlMs` as a token can be signed with, or the `InvalidArgumentError` saying which is wrong. */
export function checkedTokenTerms(scope: unknown, ttlMs: unknown): { readonly scope: RunTokenScope; readonly ttlMs: number } {
  const checkedScope = scopeOf(scope);
  if (checkedScope === undefined) throw new InvalidArgumentError('scope', "must be ['read'] or ['read', 'cancel']");
  if (typeof ttlMs !== 'number' || !Number.isFinite(ttlMs) || ttlMs <= 0) throw new InvalidArgumentError('ttlMs', 'must be a positive number of milliseconds');
  return { scope: checkedScope, ttlMs };
}

/** The two scopes a token can hold, or `undefined` for anything else. */
function scopeOf(value: unknown): RunTokenScope | undefined {
  if (!Array.isArray(value)) return undefined;
  if (value.length === 1 && value[0] === 'read') return ['read'];
  if (value.length === 2 && value[0] === 'read' && value[1] === 'cancel') return ['read', 'cancel'];
  return undefined;
}

interface EncodedClaims {
  readonly e: string;
  readonly s: RunTokenScope;
  readonly x: number;
}

function encodeClaims(claims: RunTokenClaims): EncodedClaims {
  return { e: claims.executionId, s: claims.scope, x: claims.expiresAt };
}

function decodeClaims(body: string): RunTokenClaims | undefined {
  const bytes = fromBase64Url(body);
  if (bytes === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { e, s, x } = parsed as Partial<Record<keyof EncodedClaims, unknown>>;
  const scope = scopeOf(s);
  if (typeof e !== 'string' || e === '' || scope === undefined || typeof x !== 'number' || !Number.isFinite(x)) return undefined;
  return { executionId: e, scope, expiresAt: x };
}

/**
 * Whether two byte strings are equal, in a time that depends only on their lengths: a forger learns
 * nothing from how long a refusal took about how many leading bytes of a signature were right.
 */
export function equalInConstantTime(a: Uint8Array, b: Uint8Array): boolean {
  let difference = a.length ^ b.length;
  const length = Math.max(a.length, b.length);
  for (let index = 0; index < length; index++) difference |= (a[index] ?? 0) ^ (b[index] ?? 0);
  return difference === 0;
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/u, '');
}

/** The bytes of canonical unpadded base64url `text`; another spelling of the same bytes is refused, so one token has one form. */
function fromBase64Url(text: string): Uint8Array | undefined {
  if (!/^[\w-]*$/u.test(text)) return undefined;
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(atob(text.replaceAll('-', '+').replaceAll('_', '/')), (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
  return toBase64Url(bytes) === text ? bytes : undefined;
}
