import { createHash, randomUUID } from 'node:crypto';
import { link, mkdir, readdir, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { type ClaimOptions, decideClaim, type IdempotencyClaim, type IdempotencyStore, idempotencyKey, idempotencyTtlMs, type StoredClaim } from '../runs/idempotency.js';

/*
 * The idempotency keys of `flowstream run --idempotency-key`: each run of the command is its own
 * process, so the keys live on disk, where the next run (a CI job's retry) finds them. A key has a
 * folder; each claim of it is a numbered file, written whole and then linked to its name (link(2)
 * fails when the name exists): of two processes taking the key at once, one makes the next number and
 * the other sees it, so a start is never claimed twice, and no reader sees half a claim. The owner
 * settles its claim by replacing its file (write and rename). The keys of one API base URL share a
 * folder; each new claim sweeps the free ones of that folder (expired or released), so keys do not pile
 * up on disk. The command claims its key before it uploads its `--file`s (`prepare`), so that of two runs
 * with one key only one uploads: such a claim is marked preparing until its start is about to be sent,
 * and a process that dies while preparing sent no start, so its key is free at once rather than in doubt.
 */

/** How often a claim whose start is still on its way in another process is read again. */
const WAIT_MS = 100;

/** What a claim file holds. */
interface ClaimFile {
  readonly token: string;
  readonly claimedAt: number;
  readonly expiresAt: number;
  /** The process that claimed it: while it lives and its start has not answered, others wait. */
  readonly host: string;
  readonly pid: number;
  readonly executionId?: string;
  readonly abandoned?: boolean;
  /** Its start surely started nothing: the key is free. */
  readonly released?: boolean;
  /**
   * Taken before the run's `--file` uploads, its start not sent yet (see `prepare`): if its process dies
   * meanwhile, it started nothing, and the key is free.
   */
  readonly preparing?: boolean;
}

/**
 * Where the command keeps its idempotency keys: `$FLOWSTREAM_STATE_DIR`, else
 * `$XDG_STATE_HOME/flowstream`, else `~/.local/state/flowstream`; in `idempotency-keys` there.
 */
export function idempotencyKeysDirectory(env: Readonly<Record<string, string | undefined>>): string {
  const state = env['FLOWSTREAM_STATE_DIR'] ?? join(env['XDG_STATE_HOME'] ?? join(homedir(), '.local', 'state'), 'flowstream');
  return join(state, 'idempotency-keys');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists, it is someone else's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function storedClaim(claim: ClaimFile): StoredClaim | undefined {
  if (claim.released === true) return undefined;
  const unanswered = claim.executionId === undefined && claim.abandoned !== true;
  // A process of another host (a shared folder) cannot be asked: its claim counts as held until it settles.
  const held = unanswered && (claim.host !== hostname() || alive(claim.pid));
  if (claim.preparing === true && unanswered && !held) return undefined;
  return { claimedAt: claim.claimedAt, expiresAt: claim.expiresAt, executionId: claim.executionId, abandoned: claim.abandoned === true, held };
}

function isErrno(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === code;
}

/** A folder's name for a base URL or a key: any text, fixed length. */
function hashed(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function claimNumber(name: string): number | undefined {
  const match = /^claim-(\d+)\.json$/u.exec(name);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

function waitFor(scheduler: SchedulerLike, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      timer.unsubscribe();
      reject(signal?.reason as Error);
    };
    const timer = scheduler.schedule(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** What holds a key that a claim would not hand out: an execution to follow, or a start in doubt. */
export type HeldKey = Exclude<IdempotencyClaim, { readonly kind: 'start' }>;

/** The store of `flowstream run --idempotency-key`, which can also claim a key before the run's uploads. */
export interface FileIdempotencyStore extends IdempotencyStore {
  /**
   * Claims `key` as `claim` does, before anything of its run is sent (its `--file` uploads): other
   * processes' claims wait on it as on a start on its way, so one process uploads and starts, the others
   * follow. Until {@link sending}, a process that dies holding it started nothing: its key is free again.
   */
  prepare(key: string, ttlMs: number, options?: ClaimOptions): Promise<IdempotencyClaim>;
  /** The prepared claim's start is about to be sent: from now on it is a claim like any other. */
  sending(key: string, token: string): Promise<void>;
}

/** Where {@link createFileIdempotencyStore} keeps its keys, and its clock. */
export interface FileIdempotencyStoreOptions {
  /** The folder of the keys (made when missing, readable by its owner only). */
  readonly directory: string;
  /** The API base URL the keys start runs on: keys are kept apart per service. */
  readonly baseUrl: string;
  /** The clock of the keys' expiry and of waiting on another process's start. Default real time. */
  readonly scheduler?: SchedulerLike;
}

/**
 * An {@link IdempotencyStore} in `directory`, shared by every process of this machine that uses it.
 * Keys are kept apart per API base URL (a key given against another service is another key). A claim
 * whose process died before its start answered is in doubt until it expires, as in every store.
 */
export function createFileIdempotencyStore(options: FileIdempotencyStoreOptions): FileIdempotencyStore {
  const { directory, baseUrl } = options;
  const scheduler = options.scheduler ?? asyncScheduler;
  const service = join(directory, hashed(baseUrl));
  const folderOf = (key: string): string => join(service, hashed(key));
  /** The claims in the key's folder, by number (none when the folder is missing). */
  const numbers = async (folder: string): Promise<number[]> => {
    const names = await readdir(folder).catch((error: unknown) => {
      if (isErrno(error, 'ENOENT')) return [];
      throw error;
    });
    return names.map(claimNumber).filter((found) => found !== undefined);
  };
  /** The latest claim of the key and its number (0 and none when never claimed); null when a newer claim swept it meanwhile. */
  const latest = async (folder: string): Promise<{ readonly number: number; readonly claim?: ClaimFile } | null> => {
    const number = Math.max(0, ...(await numbers(folder)));
    if (number === 0) return { number };
    try {
      return { number, claim: JSON.parse(await readFile(join(folder, `claim-${number}.json`), 'utf8')) as ClaimFile };
    } catch (error) {
      // Swept by a newer claim since the folder was read: read again.
      if (isErrno(error, 'ENOENT')) return null;
      throw error;
    }
  };
  /** The token of the claim in `file`, or undefined when there is none. */
  const tokenOf = async (file: string): Promise<string | undefined> => {
    try {
      return (JSON.parse(await readFile(file, 'utf8')) as ClaimFile).token;
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return undefined;
      throw error;
    }
  };
  const settle = async (key: string, token: string, change: (claim: ClaimFile) => ClaimFile): Promise<void> => {
    const folder = folderOf(key);
    const file = join(folder, `claim-${token.split(':')[0] ?? ''}.json`);
    let claim: ClaimFile;
    try {
      claim = JSON.parse(await readFile(file, 'utf8')) as ClaimFile;
    } catch (error) {
      // A newer claim took the key once this one expired, or it was swept: its old owner writes nothing.
      if (isErrno(error, 'ENOENT')) return;
      throw error;
    }
    if (claim.token !== token || claim.executionId !== undefined || claim.abandoned === true || claim.released === true) return;
    const written = join(folder, `.${randomUUID()}.tmp`);
    await writeFile(written, JSON.stringify(change(claim)), { mode: 0o600 });
    await rename(written, file);
  };
  /**
   * What is stored under the key once no other process's start with it is on its way (waited for
   * meanwhile): the latest claim's number and token, and what a claim does now.
   */
  const settled = async (folder: string, signal: AbortSignal | undefined): Promise<{ readonly number: number; readonly token?: string; readonly now: number; readonly decision: 'start' | HeldKey }> => {
    for (;;) {
      signal?.throwIfAborted();
      const found = await latest(folder);
      if (found === null) continue;
      const now = scheduler.now();
      const decision = decideClaim(found.claim === undefined ? undefined : storedClaim(found.claim), now);
      switch (decision.kind) {
        case 'start':
          return { number: found.number, ...(found.claim === undefined ? {} : { token: found.claim.token }), now, decision: 'start' };
        case 'wait':
          await waitFor(scheduler, WAIT_MS, signal);
          continue;
        case 'follow':
        case 'in-doubt':
          return { number: found.number, now, decision };
        default:
          return decision satisfies never;
      }
    }
  };
  /**
   * Takes the free key of `folder`, whose latest claim was number `read` with token `readToken`, with
   * the next number: its token, or undefined when another process took it first or the read was stale.
   * A number is taken once (link(2)); but a sweep empties a folder and its numbers start again at 1, so
   * a process that read the folder before a sweep could take a number next to a claim made after it.
   * A claim whose predecessor is not the one it read (gone, or another claim under its number), or that
   * a later number already follows, gives its number back and reads again.
   */
  const take = async (folder: string, read: number, readToken: string | undefined, claimedAt: number, ttlMs: number, preparing = false): Promise<string | undefined> => {
    const number = read + 1;
    const token = `${number}:${randomUUID()}`;
    const claim: ClaimFile = { token, claimedAt, expiresAt: claimedAt + ttlMs, host: hostname(), pid: process.pid, ...(preparing ? { preparing } : {}) };
    const written = join(folder, `.${randomUUID()}.tmp`);
    try {
      await writeFile(written, JSON.stringify(claim), { mode: 0o600 });
      await link(written, join(folder, `claim-${number}.json`));
    } catch (error) {
      // EEXIST: another process took this number first; ENOENT: a sweep removed the folder meanwhile.
      if (isErrno(error, 'EEXIST') || isErrno(error, 'ENOENT')) return undefined;
      throw error;
    } finally {
      await rm(written, { force: true });
    }
    const now = await numbers(folder);
    if ((read > 0 && (await tokenOf(join(folder, `claim-${read}.json`))) !== readToken) || now.some((other) => other > number)) {
      await rm(join(folder, `claim-${number}.json`), { force: true });
      return undefined;
    }
    if (read > 0) await rm(join(folder, `claim-${read}.json`), { force: true });
    return token;
  };
  /**
   * Removes the keys of this service that are free (their TTL over, or released), but `kept`'s. Each is
   * claimed first, as a run would claim it — never a live key, one in doubt, or one whose start is on
   * its way — then its claim and folder removed: a process that claims it meanwhile waits, then finds
   * it free. A folder that cannot be read is left as it is: sweeping never fails a claim.
   */
  const sweep = async (kept: string): Promise<void> => {
    const folders = await readdir(service).catch(() => []);
    for (const name of folders) {
      const folder = join(service, name);
      if (folder === kept) continue;
      try {
        const found = await latest(folder);
        if (found === null) continue;
        const now = scheduler.now();
        if (decideClaim(found.claim === undefined ? undefined : storedClaim(found.claim), now).kind !== 'start') continue;
        const token = found.claim === undefined ? undefined : await take(folder, found.number, found.claim.token, now, 0);
        if (found.number > 0 && token === undefined) continue;
        if (token !== undefined) await rm(join(folder, `claim-${token.split(':')[0] ?? ''}.json`), { force: true });
        // Fails while anything is in it: another process's claim, or one being written.
        await rmdir(folder);
      } catch {
        continue;
      }
    }
  };
  const claim = async (key: string, ttlMs: number, claimOptions: ClaimOptions, preparing: boolean): Promise<IdempotencyClaim> => {
    idempotencyKey(key);
    idempotencyTtlMs(ttlMs);
    const folder = folderOf(key);
    for (;;) {
      await mkdir(folder, { recursive: true, mode: 0o700 });
      const { number, token: readToken, now, decision } = await settled(folder, claimOptions.signal);
      if (decision !== 'start') return decision;
      const token = await take(folder, number, readToken, now, ttlMs, preparing);
      if (token === undefined) continue;
      await sweep(folder);
      return { kind: 'start', token };
    }
  };
  return {
    claim: (key, ttlMs, claimOptions = {}) => claim(key, ttlMs, claimOptions, false),
    prepare: (key, ttlMs, claimOptions = {}) => claim(key, ttlMs, claimOptions, true),
    sending: (key, token) => settle(key, token, (found) => ({ ...found, preparing: false })),
    record: (key, token, executionId) => settle(key, token, (claim) => ({ ...claim, executionId })),
    release: (key, token) => settle(key, token, (claim) => ({ ...claim, released: true })),
    abandon: (key, token) => settle(key, token, (claim) => ({ ...claim, abandoned: true })),
  };
}

/** A store whose claim of one key answers what was prepared for it, and frees that claim if the run never makes it. */
export interface PreparedStore extends IdempotencyStore {
  /** Releases the prepared start when the run never claimed it (it failed before its start: an upload, the variables' check). */
  unclaimed(): Promise<void>;
}

/**
 * `store`, whose claims of `key` answer `prepared` (what {@link FileIdempotencyStore.prepare} found or
 * took before the uploads of `--file`) without claiming the key again: a held key (an execution to
 * follow, a start in doubt) answers so however often it is claimed, and a key that expires meanwhile
 * cannot start a run whose files were never uploaded; a prepared start is handed to the run's first
 * claim, marked as sending.
 */
export function answeringPrepared(store: FileIdempotencyStore, key: string, prepared: IdempotencyClaim): PreparedStore {
  let handed = false;
  return {
    claim: async (claimed, ttlMs, options) => {
      if (claimed !== key) return store.claim(claimed, ttlMs, options);
      if (prepared.kind !== 'start') return prepared;
      if (handed) return store.claim(claimed, ttlMs, options);
      handed = true;
      await store.sending(key, prepared.token);
      return prepared;
    },
    record: (claimed, token, executionId) => store.record(claimed, token, executionId),
    release: (claimed, token) => store.release(claimed, token),
    abandon: (claimed, token) => store.abandon(claimed, token),
    unclaimed: async () => {
      if (handed || prepared.kind !== 'start') return;
      handed = true;
      await store.release(key, prepared.token);
    },
  };
}
