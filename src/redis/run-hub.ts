import type { Redis } from 'ioredis';
import { asapScheduler, asyncScheduler, interval, Observable, type SchedulerLike, Subject, type Subscriber, type Subscription, type TeardownLogic, timer } from 'rxjs';
import type { Logger } from '../domain/model.js';
import { FlowstreamError } from '../errors/flowstream-error.js';
import { InvalidArgumentError, positive, positiveInteger } from '../errors/validation-errors.js';
import { safeLogger } from '../http/safe-logger.js';
import type { RunEvent } from '../runs/events.js';
import { atHubPlace, catchUpAt, leadThrough, newLogName, type RunHub, RunStand } from '../runs/run-hub.js';
import { type RunStop, stoppedEnding } from '../runs/run-lifecycle.js';
import { readingOf, type RunState } from '../runs/run-state.js';
import { checkAccountName, hubKeys, type HubKeys } from './account-name.js';
import { connectRedis, type RedisOption } from './connection.js';
import { StreamedRun } from './streamed-run.js';

/**
 * Options of {@link createRedisRunHub}.
 *
 * @example
 * ```ts
 * const options: RedisRunHubOptions = { redis: 'redis://127.0.0.1:6379', account: 'acme-prod', leaseMs: 10_000 };
 * ```
 */
export interface RedisRunHubOptions {
  /** A Redis URL (`redis://`, `rediss://`, `redis+unix://`), or an ioredis client (its owner closes it). */
  readonly redis: RedisOption;
  /** The account's name in Redis: every process sharing executions gives the same. Never the API key. */
  readonly account: string;
  /**
   * How long a process's hold on an execution's poll lasts without renewal, in ms on the scheduler
   * (renewed three times per lease while it polls). A process that dies is replaced by another
   * follower within about a lease and a third. Default 10 s.
   */
  readonly leaseMs?: number;
  /** About how many events of one execution its stream keeps (older ones give way to a snapshot). Default 10,000. */
  readonly maxLen?: number;
  /**
   * How long an execution's stream stays in Redis after its `finished`, for late and resuming
   * followers, in ms of Redis's own clock (Redis expires the keys). Default one hour.
   */
  readonly keepMs?: number;
  /** The client's scheduler: the leases' clock and timers (every process of the account on the same clock). Default real time. */
  readonly scheduler?: SchedulerLike;
  /** Told when Redis refuses a command (the hub goes on and tries again with the next renewal). */
  readonly logger?: Logger;
}

/**
 * A {@link RunHub} shared by every process of an account through Redis, with `close()`.
 *
 * @example
 * ```ts
 * const hub = createRedisRunHub({ redis: process.env.REDIS_URL!, account: 'acme-prod' });
 * const client = createClient({ apiKey, baseUrl, hub });
 * // on shutdown:
 * await hub.close();
 * ```
 */
export interface RedisRunHub extends RunHub {
  /**
   * Stops following every execution in this process: its polls stop and its leases are handed back
   * (another process takes them over at once), and its followers error with a `FlowstreamError` coded
   * `HUB_CLOSED`. Closes the connection it made (not one it was given).
   */
  close(): Promise<void>;
}

const DEFAULTS = {
  leaseMs: 10_000,
  maxLen: 10_000,
  keepMs: 3_600_000,
  /** How long a followed execution's keys stay without a lease renewal or an event (Redis's clock): a fleet gone away leaves nothing for ever. */
  liveMs: 86_400_000,
} as const;

/** Renewals (and, for a follower, attempts to take over) per lease. */
const CHECKS_PER_LEASE = 3;

/**
 * Opens an execution's stream for a follower: names its sequence (once, for the stream's life) and
 * answers where it stands — `{ log, seq, state, finished, firstId, stop }`: the last event's seq, the state
 * the events add up to, the id of the oldest event kept (`''` for none), and how a process stopped it (`''` for none).
 * KEYS: state, events. ARGV: a new log name, liveMs.
 */
const OPEN_SCRIPT = `
redis.call('HSETNX', KEYS[1], 'log', ARGV[1])
local s = redis.call('HMGET', KEYS[1], 'log', 'seq', 'state', 'finished', 'stop')
if not s[4] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
local first = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)
local firstId = ''
if first[1] then firstId = first[1][1] end
return {s[1], s[2] or '0', s[3] or '', s[4] or '', firstId, s[5] or ''}
`;

/**
 * Takes or renews the lease on an execution's poll: `{-1}` the stream has finished (nobody polls it);
 * `{0}` another holds an unexpired lease; `{2}` renewed; `{1, seq, state}` taken now, with where the
 * stream stands. The expiry is on the caller's clock (the scheduler all the account's processes share).
 * KEYS: lease, state, events. ARGV: token, now, until, liveMs.
 */
const LEASE_SCRIPT = `
if redis.call('HGET', KEYS[2], 'finished') == '1' then return {-1} end
local held = redis.call('HMGET', KEYS[1], 'token', 'until')
if held[1] and held[1] ~= ARGV[1] and tonumber(held[2]) > tonumber(ARGV[2]) then return {0} end
redis.call('HSET', KEYS[1], 'token', ARGV[1], 'until', ARGV[3])
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
if held[1] == ARGV[1] then return {2} end
local s = redis.call('HMGET', KEYS[2], 'seq', 'state')
return {1, s[1] or '0', s[2] or ''}
`;

/**
 * Marks an execution being aborted by one of the account's processes (a relay's cancel), unless its
 * stream has finished: the `finished` appended later carries the mark, so every follower reads it the
 * same way. A stream nobody follows yet gets the keys' usual expiry. KEYS: state. ARGV: how it was stopped, liveMs.
 */
const STOP_SCRIPT = `
if redis.call('HGET', KEYS[1], 'finished') == '1' then return 0 end
local fresh = redis.call('EXISTS', KEYS[1]) == 0
redis.call('HSET', KEYS[1], 'stop', ARGV[1])
if fresh then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
`;

/** Hands a lease back, if it is still the caller's. KEYS: lease. ARGV: token. */
const RELEASE_SCRIPT = `
if redis.call('HGET', KEYS[1], 'token') == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`;

/**
 * Appends events to an execution's stream under its lease (the fencing: a holder that lost its lease
 * appends nothing), each at the next seq as its stream id `0-<seq>`, and keeps the state they add up
 * to. `finished` ends the stream: the lease goes, and the keys expire after keepMs; it carries the
 * stop marked by a process that aborted the execution (field `stop`, see STOP_SCRIPT). Answers the
 * last seq, or -1 when the lease is not the caller's.
 * KEYS: lease, events, state. ARGV: token, maxLen, liveMs, keepMs, state, finished ('1'/'0'), events…
 */
const APPEND_SCRIPT = `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return -1 end
local seq = tonumber(redis.call('HGET', KEYS[3], 'seq') or '0')
local stop = false
if ARGV[6] == '1' then stop = redis.call('HGET', KEYS[3], 'stop') end
for i = 7, #ARGV do
  seq = seq + 1
  if stop and i == #ARGV then
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '0-' .. seq, 'e', ARGV[i], 'stop', stop)
  else
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '0-' .. seq, 'e', ARGV[i])
  end
end
redis.call('HSET', KEYS[3], 'seq', seq, 'state', ARGV[5])
local ttl = ARGV[3]
if ARGV[6] == '1' then
  redis.call('HSET', KEYS[3], 'finished', '1')
  redis.call('DEL', KEYS[1])
  ttl = ARGV[4]
end
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('PEXPIRE', KEYS[3], ttl)
return seq
`;

interface HubCommands {
  flowstreamHubOpen(state: string, events: string, log: string, liveMs: number): Promise<[string, string, string, string, string, string]>;
  flowstreamHubStop(state: string, by: string, liveMs: number): Promise<number>;
  flowstreamHubLease(lease: string, state: string, events: string, token: string, now: number, until: number, liveMs: number): Promise<[number, string?, string?]>;
  flowstreamHubRelease(lease: string, token: string): Promise<number>;
  flowstreamHubAppend(lease: string, events: string, state: string, token: string, maxLen: number, liveMs: number, keepMs: number, snapshot: string, finished: string, ...appended: string[]): Promise<number>;
}

/**
 * Creates a {@link RunHub} in Redis: the runs and watches of every process of the account (and their
 * relays) share one poll stream per execution. One process holds a lease on each followed execution
 * and appends its events to a capped Redis Stream; followers in any process read that stream, so
 * every event has the same place (`seq`) everywhere and a viewer resumes by it in any process. When the
 * poller dies (or leaves), its lease runs out and another follower takes over, going on after the
 * stream's last event: nothing is lost or repeated. A run started in a process (`lead`) takes the
 * lease and appends its own events.
 *
 * In each process the first follower of an execution gets its stream from the start (or, when the
 * stream was trimmed, a `snapshot` of the state and what follows), later ones a `snapshot` of how it
 * stands; `followers()` counts this process's. While Redis is away followers wait, and the poller's
 * events wait in order to be appended once it is back.
 *
 * @example
 * ```ts
 * import { createRedisRunHub } from 'flowstream/redis';
 * const hub = createRedisRunHub({ redis: process.env.REDIS_URL!, account: 'acme-prod' });
 * const client = createClient({ apiKey, baseUrl, hub });
 * const relay = createRunRelay({ client, tokens });  // SSE ids are the same in every process
 * ```
 */
export function createRedisRunHub(options: RedisRunHubOptions): RedisRunHub {
  const given: unknown = options;
  if (typeof given !== 'object' || given === null) throw new InvalidArgumentError('options', 'must be an object');
  const account = checkAccountName(options.account);
  const settings = {
    leaseMs: positive('leaseMs', options.leaseMs ?? DEFAULTS.leaseMs),
    maxLen: positiveInteger('maxLen', options.maxLen ?? DEFAULTS.maxLen),
    keepMs: positive('keepMs', options.keepMs ?? DEFAULTS.keepMs),
    scheduler: options.scheduler ?? asyncScheduler,
  };
  const logger = safeLogger(options.logger);
  const connection = connectRedis(options.redis);
  const redis = connection.client as Redis & Partial<HubCommands>;
  if (redis.flowstreamHubStop === undefined) {
    redis.defineCommand('flowstreamHubOpen', { numberOfKeys: 2, lua: OPEN_SCRIPT });
    redis.defineCommand('flowstreamHubLease', { numberOfKeys: 3, lua: LEASE_SCRIPT });
    redis.defineCommand('flowstreamHubRelease', { numberOfKeys: 1, lua: RELEASE_SCRIPT });
    redis.defineCommand('flowstreamHubStop', { numberOfKeys: 1, lua: STOP_SCRIPT });
    redis.defineCommand('flowstreamHubAppend', { numberOfKeys: 3, lua: APPEND_SCRIPT });
  }
  const commands = redis as Redis & HubCommands;
  const reader = new StreamReader(
    redis.duplicate(),
    redis,
    `{fs:${account}:hub-wake}:${newLogName()}`,
    settings.scheduler,
    (error) => {
      logger?.warn('flowstream: the run hub could not read its streams from Redis; retrying', { account, error: error instanceof Error ? error.message : String(error) });
    },
    (key, id) => {
      logger?.warn('flowstream: the run hub skipped an entry of an execution\'s stream that is not an event', { account, stream: key, entry: id });
    },
  );
  const follows = new Map<string, RedisFollow>();
  let checks: Subscription | undefined;
  let closed = false;

  const context: HubContext = {
    account,
    settings,
    commands,
    reader,
    warn: (message, error) => logger?.warn(`flowstream: ${message}`, { account, error: error instanceof Error ? error.message : String(error) }),
    forget: (follow) => {
      if (follows.get(follow.executionId) === follow) follows.delete(follow.executionId);
      if (follows.size === 0) {
        checks?.unsubscribe();
        checks = undefined;
      }
    },
  };

  const followOf = (executionId: string): RedisFollow => {
    if (closed) throw new FlowstreamError('The hub is closed', 'HUB_CLOSED');
    const known = follows.get(executionId);
    if (known !== undefined) return known;
    const created = new RedisFollow(executionId, context);
    follows.set(executionId, created);
    // One timer for every execution followed here: renew the leases held, try to take over the others.
    checks ??= interval(settings.leaseMs / CHECKS_PER_LEASE, settings.scheduler).subscribe(() => {
      for (const follow of follows.values()) follow.checkLease();
    });
    return created;
  };

  return {
    follow: (executionId, start) => new Observable<RunEvent>((subscriber) => followOf(executionId).join(subscriber, start)),
    lead: (run) =>
      // An execution already followed here is not led twice: the run just goes on.
      leadThrough(run, (executionId) => {
        if (closed || follows.has(executionId)) return undefined;
        const led = followOf(executionId);
        led.lead();
        return led;
      }),
    followers: (executionId) => follows.get(executionId)?.followers ?? 0,
    aborting: (executionId) => {
      commands.flowstreamHubStop(hubKeys(account, executionId).state, 'aborted', DEFAULTS.liveMs).catch((error: unknown) => {
        context.warn('the run hub could not mark an execution aborted', error);
      });
    },
    close: async () => {
      if (closed) return;
      closed = true;
      checks?.unsubscribe();
      checks = undefined;
      const releases = [...follows.values()].map((follow) => follow.close());
      follows.clear();
      await Promise.all(releases);
      reader.close();
      await connection.close();
    },
  };
}

/** What a followed execution needs from its hub. */
interface HubContext {
  readonly account: string;
  readonly settings: { readonly leaseMs: number; readonly maxLen: number; readonly keepMs: number; readonly scheduler: SchedulerLike };
  readonly commands: Redis & HubCommands;
  readonly reader: StreamReader;
  warn(message: string, error: unknown): void;
  forget(follow: RedisFollow): void;
}

/** This process's hold on an execution's poll: its lease's token, and what it appends under it. */
interface Hold {
  readonly token: string;
  readonly appender: StreamAppender;
  /** The poll this process runs to feed it; none while a run of this process leads it. */
  poll?: Subscription;
}

let tokens = 0;
const processToken = newLogName();

/**
 * One execution followed in this process through Redis: its local followers (fed from the stream),
 * how it stands for a late one, and this process's hold on its poll when it has one.
 */
class RedisFollow {
  readonly executionId: string;
  readonly #context: HubContext;
  readonly #keys: HubKeys;
  readonly #subject = new Subject<RunEvent>();
  #stand = new RunStand();
  #log = '';
  #lastSeq = 0;
  #followers = 0;
  #led = false;
  #start: (() => Observable<RunEvent>) | undefined;
  #opened = false;
  #ended = false;
  #hold: Hold | undefined;
  /** A lease command on its way: the next check waits for it rather than pile up while Redis is away. */
  #leasing = false;
  /** The teardown once the last follower left, held until the current task is over. */
  #leaving: Subscription | undefined;
  /** Entries read after a gap, waiting for the snapshot that bridges it (see `#read`). */
  #bridging: StreamEntry[] | undefined;

  constructor(executionId: string, context: HubContext) {
    this.executionId = executionId;
    this.#context = context;
    this.#keys = hubKeys(context.account, executionId);
  }

  get followers(): number {
    return this.#followers + (this.#led ? 1 : 0);
  }

  join(subscriber: Subscriber<RunEvent>, start: () => Observable<RunEvent>): TeardownLogic {
    this.#start ??= start;
    if (this.#lastSeq > 0) for (const event of catchUpAt(this.#stand, this.#lastSeq, this.#log)) subscriber.next(event);
    if (subscriber.closed) return undefined;
    this.#followers += 1;
    this.#leaving?.unsubscribe();
    this.#leaving = undefined;
    const joined = this.#subject.subscribe(subscriber);
    if (!this.#opened) {
      this.#opened = true;
      void this.#open();
    }
    return () => {
      joined.unsubscribe();
      this.#followers -= 1;
      this.#leaveIfAlone();
    };
  }

  /** A run of this process started the execution: it takes the lease, and its events are offered (see `offer`). */
  lead(): void {
    this.#led = true;
    this.#early = [];
    this.checkLease();
  }

  /** One event of the leading run: appended while the run's own hold on the lease lasts. */
  offer(event: RunEvent): void {
    const hold = this.#hold;
    if (hold !== undefined) {
      if (hold.poll === undefined) hold.appender.push(event);
      return;
    }
    this.#early?.push(event);
  }

  /** The leading run's events until the answer to its first lease came; `undefined` once it came. */
  #early: RunEvent[] | undefined;

  /** The leading run stopped: its lease is handed back once its events are appended, and a local follower polls on. */
  leadEnded(): void {
    if (!this.#led) return;
    this.#led = false;
    this.#early = undefined;
    const hold = this.#hold;
    if (hold !== undefined && hold.poll === undefined) {
      this.#hold = undefined;
      void this.#release(hold).then(() => {
        if (this.#followers > 0 && !this.#ended) this.checkLease();
      });
    }
    this.#leaveIfAlone();
  }

  /** Renews the lease held, or tries to take it over when it ran out: called three times per lease. */
  checkLease(): void {
    if (!this.#opened && this.#followers > 0 && !this.#ended) {
      // Its opening was refused: tried again now (it checks the lease once opened).
      this.#opened = true;
      void this.#open();
      return;
    }
    if (this.#leasing || this.#ended || this.followers === 0) return;
    this.#leasing = true;
    const { leaseMs, scheduler } = this.#context.settings;
    const token = this.#hold?.token ?? `${processToken}:${(tokens += 1)}`;
    const now = scheduler.now();
    this.#context.commands.flowstreamHubLease(this.#keys.lease, this.#keys.state, this.#keys.events, token, now, now + leaseMs, DEFAULTS.liveMs).then(
      (answer) => {
        this.#leasing = false;
        this.#leased(token, answer);
      },
      (error: unknown) => {
        this.#leasing = false;
        this.#context.warn('the run hub could not renew a lease', error);
      },
    );
  }

  #leased(token: string, [outcome, seq, state]: [number, string?, string?]): void {
    if (this.#ended || this.followers === 0) {
      if (outcome === 1 || outcome === 2) void this.#context.commands.flowstreamHubRelease(this.#keys.lease, token).catch(() => undefined);
      return;
    }
    if (outcome === 2) return;
    const early = this.#early;
    this.#early = undefined;
    if (outcome !== 1) {
      // Finished, or held by another: a poll of ours stops (the stream tells the rest).
      this.#dropHold();
      return;
    }
    const streamed = new StreamedRun(Number(seq ?? 0) > 0 ? this.#stateOf(state) : undefined);
    const hold: Hold = { token, appender: new StreamAppender(streamed, token, this.#keys, this.#context, () => {
        this.#lost(hold);
      }) };
    this.#dropHold();
    this.#hold = hold;
    if (early !== undefined) {
      // The leading run's first lease: its events are the stream's.
      for (const event of early) hold.appender.push(event);
      return;
    }
    const start = this.#start;
    if (start === undefined) {
      // A run that lost its lease does not take it back: what it missed meanwhile is read by a poll.
      this.#dropHold();
      return;
    }
    hold.poll = start().subscribe({
      next: (event) => {
        hold.appender.push(event);
      },
      error: (error: unknown) => {
        // Each process learns a failure from its own poll: this one's followers get it, and the lease goes back.
        this.#dropHold();
        this.#end();
        this.#subject.error(error);
      },
      complete: () => {
        if (streamed.finished) return;
        this.#dropHold();
        this.#end();
        this.#subject.complete();
      },
    });
  }

  /** The lease went to another process while this one polled: its poll stops. */
  #lost(hold: Hold): void {
    if (this.#hold !== hold) return;
    hold.poll?.unsubscribe();
    this.#hold = undefined;
  }

  #dropHold(): void {
    const hold = this.#hold;
    if (hold === undefined) return;
    this.#hold = undefined;
    hold.poll?.unsubscribe();
    void this.#release(hold);
  }

  /** Hands the lease back once everything the hold had to append is in. */
  async #release(hold: Hold): Promise<void> {
    await hold.appender.settled();
    await this.#context.commands.flowstreamHubRelease(this.#keys.lease, hold.token).catch((error: unknown) => {
      this.#context.warn('the run hub could not hand a lease back', error);
    });
  }

  /** Where this process starts reading the stream: its start, or a snapshot when the start was trimmed away. */
  async #open(): Promise<void> {
    const { commands, reader } = this.#context;
    let opened: [string, string, string, string, string, string];
    try {
      opened = await commands.flowstreamHubOpen(this.#keys.state, this.#keys.events, newLogName(), DEFAULTS.liveMs);
    } catch (error) {
      this.#context.warn('the run hub could not open an execution', error);
      this.#opened = false;
      return;
    }
    if (this.#ended || this.followers === 0) return;
    const [log, seq, state, finished, firstId, stop] = opened;
    this.#log = log;
    let after = 0;
    const parsed = firstId !== '' && firstId !== '0-1' ? this.#stateOf(state) : undefined;
    if (parsed !== undefined) {
      // A finished stream's snapshot stands at the place before its `finished`, which is then read at its
      // own (trimming keeps the latest entries): the followers' stream ends with it, as a local late follower's does.
      after = Number(seq) - (finished === '1' ? 1 : 0);
      this.#see(after, { type: 'snapshot', executionId: this.executionId, state: stoppedState(parsed, stop) });
    }
    reader.follow(this.#keys.events, after, (entries) => {
      this.#read(entries);
    });
    this.checkLease();
  }

  /**
   * Entries read from the stream, to the local followers. Entries trimmed away before they were read (a
   * batch longer than `maxLen`, a process that stalled) leave a gap: the followers are brought over it by a
   * snapshot of the state the stream stands at, and the entries read meanwhile wait for it.
   */
  #read(entries: readonly StreamEntry[]): void {
    const waiting = this.#bridging;
    if (waiting !== undefined) {
      waiting.push(...entries);
      return;
    }
    const first = entries[0];
    if (first === undefined || first[0] <= this.#lastSeq + 1) {
      for (const [seq, event] of entries) this.#see(seq, event);
      return;
    }
    const bridged = [...entries];
    this.#bridging = bridged;
    this.#context.commands.hmget(this.#keys.state, 'seq', 'state', 'finished', 'stop').then(
      ([seq, state, finished, stop]) => {
        this.#bridging = undefined;
        const parsed = typeof seq === 'string' ? this.#stateOf(state) : undefined;
        if (parsed !== undefined) {
          // A finished stream's snapshot stands before its `finished`, which then ends the followers' stream (see `#open`).
          const at = Number(seq) - (finished === '1' ? 1 : 0);
          this.#see(at, { type: 'snapshot', executionId: this.executionId, state: stoppedState(parsed, stop ?? '') });
        }
        for (const [entrySeq, event] of bridged) this.#see(entrySeq, event);
      },
      (error: unknown) => {
        this.#context.warn('the run hub could not read where a trimmed stream stands', error);
        this.#bridging = undefined;
        for (const [seq, event] of bridged) this.#see(seq, event);
      },
    );
  }

  /**
   * The execution's state as its hash in Redis holds it (`''` or absent: none yet). One that does not read
   * (another program wrote over it) is skipped with a warning, as an entry that is not an event is: the
   * followers go on from the stream's entries.
   */
  #stateOf(text: string | null | undefined): RunState | undefined {
    if (text === undefined || text === null || text === '') return undefined;
    try {
      const state: unknown = JSON.parse(text);
      if (typeof state === 'object' && state !== null && !Array.isArray(state)) return state as RunState;
    } catch {
      // told below
    }
    this.#context.warn('the run hub skipped an execution\'s state that is not a run state', new Error(`${this.#keys.state} does not hold a JSON object`));
    return undefined;
  }

  /** One event of the stream, at `seq`: to every local follower. */
  #see(seq: number, event: RunEvent): void {
    if (this.#ended || seq < this.#lastSeq || (seq === this.#lastSeq && event.type !== 'snapshot')) return;
    this.#lastSeq = seq;
    this.#stand.see(event);
    this.#subject.next(atHubPlace(event, { seq, log: this.#log }));
    if (event.type !== 'finished') return;
    this.#end();
    this.#subject.complete();
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    // A leading run still waiting for its first lease answer (the hub closed meanwhile) keeps none of its events from now on.
    this.#early = undefined;
    this.#context.reader.unfollow(this.#keys.events);
    this.#context.forget(this);
  }

  #leaveIfAlone(): void {
    if (this.followers > 0) return;
    this.#leaving ??= asapScheduler.schedule(() => {
      this.#leaving = undefined;
      if (this.followers > 0) return;
      this.#dropHold();
      this.#end();
    });
  }

  /** The hub closes: the lease goes back, and the followers here error. */
  async close(): Promise<void> {
    const hold = this.#hold;
    this.#hold = undefined;
    hold?.poll?.unsubscribe();
    this.#end();
    this.#subject.error(new FlowstreamError('The run hub was closed', 'HUB_CLOSED'));
    if (hold !== undefined) await this.#release(hold);
  }
}

/**
 * What a lease holder appends, in order: a reading's events together (a run of this client marks each
 * read's events; any other event goes alone), each only if it is news to the stream (see
 * {@link StreamedRun}), with the state they add up to for late followers.
 */
class StreamAppender {
  readonly #streamed: StreamedRun;
  readonly #token: string;
  readonly #keys: HubKeys;
  readonly #context: HubContext;
  readonly #lost: () => void;
  #batch: RunEvent[] = [];
  #chain: Promise<void> = Promise.resolve();
  #dead = false;

  constructor(streamed: StreamedRun, token: string, keys: HubKeys, context: HubContext, lost: () => void) {
    this.#streamed = streamed;
    this.#token = token;
    this.#keys = keys;
    this.#context = context;
    this.#lost = lost;
  }

  push(event: RunEvent): void {
    if (this.#dead) return;
    const admitted = this.#streamed.admit(event);
    if (admitted !== undefined) this.#batch.push(admitted);
    const reading = readingOf(event);
    if (reading !== undefined && event !== reading.events.at(-1)) return;
    this.#flush();
  }

  /** Resolves once everything pushed so far is appended (or refused). */
  settled(): Promise<void> {
    return this.#chain;
  }

  #flush(): void {
    if (this.#batch.length === 0) return;
    const events = this.#batch.map((event) => JSON.stringify(event));
    this.#batch = [];
    const state = JSON.stringify(this.#streamed.state);
    const finished = this.#streamed.finished ? '1' : '0';
    const { maxLen, keepMs } = this.#context.settings;
    this.#chain = this.#chain.then(async () => {
      if (this.#dead) return;
      try {
        const seq = await this.#context.commands.flowstreamHubAppend(this.#keys.lease, this.#keys.events, this.#keys.state, this.#token, maxLen, DEFAULTS.liveMs, keepMs, state, finished, ...events);
        if (seq !== -1) return;
      } catch (error) {
        this.#context.warn('the run hub could not append events', error);
      }
      // Fenced off (another process holds the lease now) or refused: the stream goes on without this hold.
      this.#dead = true;
      this.#lost();
    });
  }
}

/** The first pause after a failed blocking read, in ms on the scheduler; it doubles up to the next. */
const READ_RETRY_MS = 50;
const READ_RETRY_MAX_MS = 2_000;

/** One entry of a stream: its seq, and the event. */
type StreamEntry = readonly [number, RunEvent];

/**
 * The blocking reads of one hub: one dedicated connection (a blocking read holds its connection) reads
 * every execution followed here with one `XREAD BLOCK`, each from the last seq it delivered. A stream
 * of the hub's own wakes it when the set of executions changes, with no race: a wake sent before the
 * read is found by it.
 */
export class StreamReader {
  readonly #connection: Redis;
  /** Where wakes are sent from: not the blocked connection. */
  readonly #writer: Redis;
  readonly #wakeKey: string;
  #wakeId = '0-0';
  readonly #streams = new Map<string, { after: number; readonly deliver: (entries: readonly StreamEntry[]) => void }>();
  #running = false;
  #closed = false;
  readonly #scheduler: SchedulerLike;
  readonly #warn: (error: unknown) => void;
  /** The pause after a failed read, ended early by `close()`. */
  #pause: Subscription | undefined;

  /** Told of each entry skipped because it is not an event (written by something else, or another version). */
  readonly #skipped: (key: string, id: string) => void;

  constructor(connection: Redis, writer: Redis, wakeKey: string, scheduler: SchedulerLike, warn: (error: unknown) => void, skipped: (key: string, id: string) => void = () => undefined) {
    this.#connection = connection;
    this.#writer = writer;
    this.#wakeKey = wakeKey;
    this.#scheduler = scheduler;
    this.#warn = warn;
    this.#skipped = skipped;
    connection.on('error', () => undefined);
  }

  follow(key: string, after: number, deliver: (entries: readonly StreamEntry[]) => void): void {
    this.#streams.set(key, { after, deliver });
    this.#wake();
  }

  unfollow(key: string): void {
    if (this.#streams.delete(key)) this.#wake();
  }

  close(): void {
    this.#closed = true;
    this.#pause?.unsubscribe();
    this.#connection.disconnect();
  }

  /** Waits `ms` on the scheduler, or until `close()`. */
  #wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.#pause = timer(ms, this.#scheduler).subscribe({ complete: resolve });
      this.#pause.add(resolve);
    });
  }

  /** Closed, or its connection ended for good. */
  #stopped(): boolean {
    return this.#closed || this.#connection.status === 'end';
  }

  #wake(): void {
    if (this.#closed) return;
    if (!this.#running) {
      this.#running = true;
      void this.#run();
      return;
    }
    void this.#writer
      .multi()
      .xadd(this.#wakeKey, 'MAXLEN', '1', '*', 'w', '1')
      .pexpire(this.#wakeKey, DEFAULTS.liveMs)
      .exec()
      .catch(() => undefined);
  }

  async #run(): Promise<void> {
    let failures = 0;
    while (!this.#closed && this.#streams.size > 0) {
      const asked = new Map(this.#streams);
      const streams = [...asked];
      let reply: unknown;
      try {
        reply = await this.#connection.call('XREAD', 'BLOCK', '0', 'STREAMS', this.#wakeKey, ...streams.map(([key]) => key), this.#wakeId, ...streams.map(([, stream]) => `0-${stream.after}`));
        failures = 0;
      } catch (error) {
        if (this.#stopped()) break;
        // A refused read (Redis away, or an error that persists) is tried again after a growing pause,
        // not at once: a persistent error must not spin.
        if (failures === 0) this.#warn(error);
        failures += 1;
        await this.#wait(Math.min(READ_RETRY_MS * 2 ** (failures - 1), READ_RETRY_MAX_MS));
        continue;
      }
      for (const [key, entries] of (reply ?? []) as [string, [string, string[]][]][]) {
        if (key === this.#wakeKey) {
          this.#wakeId = entries.at(-1)?.[0] ?? this.#wakeId;
          continue;
        }
        const stream = this.#streams.get(key);
        // Followed afresh since the read was asked (from another place): the next read asks from its own.
        if (stream === undefined || stream !== asked.get(key)) continue;
        const delivered: StreamEntry[] = [];
        for (const [id, fields] of entries) {
          const seq = Number(id.slice(id.indexOf('-') + 1));
          if (seq <= stream.after) continue;
          stream.after = seq;
          const event = eventOf(fields);
          // One bad entry must not stop the reads of every execution followed here (nor, thrown, the process).
          if (event === undefined) this.#skipped(key, id);
          else delivered.push([seq, event]);
        }
        if (delivered.length > 0) stream.deliver(delivered);
      }
    }
    this.#running = false;
    if (!this.#closed && this.#streams.size > 0) this.#wake();
  }
}

/**
 * The event an entry of an execution's stream holds (its field `e`), or `undefined` for anything else;
 * a `finished` as the process that stopped the execution tells it (its field `stop`, see APPEND_SCRIPT).
 */
function eventOf(fields: readonly string[]): RunEvent | undefined {
  if (fields[0] !== 'e' || fields[1] === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(fields[1]);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { type, executionId } = parsed as { readonly type?: unknown; readonly executionId?: unknown };
  if (typeof type !== 'string' || typeof executionId !== 'string') return undefined;
  const event = parsed as RunEvent;
  return event.type === 'finished' && fields[2] === 'stop' ? stoppedEnding(stopOf(fields[3]), event) : event;
}

/** The stop a process marked on an execution's stream: `aborted`, or none (`''`, or what this version does not know). */
function stopOf(mark: string | undefined): RunStop | undefined {
  return mark === 'aborted' ? { by: 'aborted', afterEnd: false } : undefined;
}

/** A stream's state as the process that stopped the execution tells it: its result ended `aborted` when it failed after the abort. */
function stoppedState(state: RunState, stop: string): RunState {
  const { result } = state;
  if (result === undefined || state.executionId === undefined) return state;
  return { ...state, result: stoppedEnding(stopOf(stop), { type: 'finished', executionId: state.executionId, result }).result };
}
