import type { KeyCadence, ReadNeed } from '../domain/budget.js';
import type { RequestBudgetOptions } from '../domain/options.js';
import type { GateReport, GateTicket } from '../domain/requests.js';
import { identicalStartKey } from './account-rules.js';
import type { AccountConfig } from './account-rules.js';
import { chooseNext, FAIR_CLASSES, fairClassOf, FairQueue, IndexedHeap, StartLines } from './fair-queue.js';
import type { ClassHead, FairClass, QueuedRequest, ReadOrder } from './fair-queue.js';
import { createMemoryLedger, LedgerAccount } from './ledger.js';
import type { MemoryLedger } from './ledger.js';

export type { KeyCadence, ReadNeed };

/*
 * When a run's read goes, written once: the budget's reads class applies it to every registered need,
 * and a run without a budget times its own reads by the same `readDueAt`.
 *
 * A read becomes due at the run's wish, within its bounds. When the account can give more (`fairMs`,
 * one read per run per that interval spends the pace the account allows, is shorter than the wish), a
 * run whose change is as likely at any time reads at its share — never faster than the service's own
 * 2 s loop. Once due, it waits its turn in the reads class: round-robin by run (fair-queue.ts), a read
 * whose change is not yet likely deferred by up to `MAX_DEFER_ROUNDS` turns, and a read certain to find
 * a change goes first — once per turn of the round-robin, so that it spends the run's own turn, and
 * spaced from other runs' when hundreds of reads wait, so that a round in which many runs end keeps going.
 */

/** service.md §6: the service's own tool reads every 2 s; spare budget never polls a quiet run faster. */
export const FAIR_FLOOR_MS = 2_000;

/**
 * service.md §3.2, §3.3: a child starts, and a finished execution says so, on the service's next tick,
 * within this long of what the run saw.
 */
const SERVICE_TICK_MS = 1_500;

/**
 * The most turns of the round-robin a read is put back because its change is not yet likely: no run
 * waits more than `MAX_DEFER_ROUNDS + 1` turns once its read is due, whatever its model says.
 */
export const MAX_DEFER_ROUNDS = 2;

/**
 * When the need's read is due: the run's wish within its bounds, and for a flat model no later than
 * its fair share `fairMs` of the account when that is shorter (`undefined`: no account, the wish alone).
 * A certain read that would go ahead of others waiting (`crowded`) is due once the tick that makes it
 * certain has passed, within its maximum gap: it must not take their place early and find nothing.
 *
 * @example
 * ```ts
 * readDueAt({ since: 0, minMs: 500, wishMs: 10_000, maxMs: 10_000 }, 6_316); // 6_316: the budget is loose
 * ```
 */
export function readDueAt(need: ReadNeed, fairMs: number | undefined, crowded = false): number {
  const { since, minMs, maxMs } = need;
  const wishMs = Math.min(Math.max(minMs, maxMs), Math.max(minMs, need.wishMs));
  if (need.certain === true) return since + (crowded ? Math.max(wishMs, Math.min(maxMs, SERVICE_TICK_MS)) : wishMs);
  const flat = need.likelyAt === undefined;
  const shareMs = flat && fairMs !== undefined && fairMs > 0 ? Math.max(minMs, FAIR_FLOOR_MS, fairMs) : Infinity;
  return since + Math.min(wishMs, shareMs);
}

/**
 * A need timed by learned durations, re-timed for the run's share of the account when that share is
 * shorter than the need's maximum gap: the run may spend a read per `fairMs`, and its model places
 * them where its change is likely (`ReadNeed.atShare`); its read, once likely, then takes the reads
 * class's current turn (`ReadOrder.inCurrentTurn` in fair-queue.ts). Otherwise the need as the run
 * timed it, for one read per its maximum gap.
 */
export function retimedForShare(need: ReadNeed, fairMs: number | undefined): ReadNeed {
  if (need.atShare === undefined || need.likelyAt === undefined || fairMs === undefined || !(fairMs > 0)) return need;
  const shareMs = Math.max(need.minMs, FAIR_FLOOR_MS, fairMs);
  if (shareMs >= need.maxMs) return need;
  const timing = need.atShare(shareMs);
  return { ...need, wishMs: timing.waitMs, likelyAt: timing.likelyAt };
}

/**
 * How many turns of the round-robin (`fairMs` each) the read is put back: the time from its due moment
 * until its change has become likely, at most `MAX_DEFER_ROUNDS`; 0 for a flat model or a certain read.
 *
 * @example
 * ```ts
 * readDeferral({ since: 0, minMs: 500, wishMs: 2_000, maxMs: 10_000, likelyAt: 32_000 }, 2_000, 20_000); // 1.5
 * ```
 */
function readDeferral(need: ReadNeed, dueAt: number, fairMs: number | undefined): number {
  if (need.likelyAt === undefined || need.certain === true || fairMs === undefined || !(fairMs > 0)) return 0;
  return Math.min(MAX_DEFER_ROUNDS, Math.max(0, (need.likelyAt - dueAt) / fairMs));
}


/**
 * Each run's polling as the budget lets it happen, per key (the execution id), with what keeps a key
 * alive: a request of it queued or in flight. A key is forgotten once it has not polled for the idle
 * time and has nothing queued or in flight: its run has ended or no longer needs the budget (a run
 * whose slow output read is still on its way is not idle).
 *
 * Incremental, so that no step scans every run: keys sit in a map in the order of their last poll
 * (re-inserted on each), so pruning reads only the keys that have gone idle; one that is idle but busy
 * leaves that order and is forgotten when its last request settles. The public record is rebuilt only
 * after a change, when someone reads it.
 */
export class KeyCadences {
  readonly #cadences = new Map<string, KeyCadence>();
  /** Keys by their last poll, oldest first; an idle key that was busy has left it. */
  readonly #byLastPoll = new Map<string, number>();
  readonly #busy = new Map<string, number>();
  #record: Readonly<Record<string, KeyCadence>> | undefined;
  readonly #idleMs: number;

  constructor(idleMs: number) {
    this.#idleMs = idleMs;
  }

  /** A request of `ticket`'s key was queued or sent (`+1`), or left the queue or was answered (`−1`). */
  busy(ticket: GateTicket, delta: 1 | -1, now: number): void {
    const key = ticket.key;
    if (key === undefined) return;
    const count = (this.#busy.get(key) ?? 0) + delta;
    if (count > 0) {
      this.#busy.set(key, count);
      return;
    }
    this.#busy.delete(key);
    // Idle and busy when pruned: forgotten now that nothing of it is left.
    const cadence = this.#cadences.get(key);
    if (cadence !== undefined && !this.#byLastPoll.has(key) && cadence.lastSentAt + this.#idleMs <= now) this.#forget(key);
  }

  /**
   * A status poll of `ticket`'s key, queued at `enqueuedAt`, was sent at `now`. A read that cut in
   * (certain to find a change, fair-queue.ts) is not the run's cadence: it goes outside the turns, like
   * a read asked as urgent, and its run's next turn comes later for it.
   */
  polled(ticket: GateTicket, enqueuedAt: number, now: number, cutIn = false): void {
    const key = ticket.key;
    if (ticket.priority !== 'status' || key === undefined || cutIn) return;
    const previous = this.#cadences.get(key);
    const waitMs = now - enqueuedAt;
    this.#cadences.set(key, previous === undefined ? { lastSentAt: now, waitMs } : { lastSentAt: now, intervalMs: now - previous.lastSentAt, waitMs });
    this.#byLastPoll.delete(key);
    this.#byLastPoll.set(key, now);
    this.#record = undefined;
  }

  /** Forgets the keys idle for `idleMs` with nothing queued or in flight. */
  prune(now: number): void {
    for (const [key, lastSentAt] of this.#byLastPoll) {
      if (lastSentAt + this.#idleMs > now) return;
      this.#byLastPoll.delete(key);
      if (!this.#busy.has(key)) this.#forget(key);
    }
  }

  /** How many keys (runs) poll now: polled within `idleMs`, or with a request queued or in flight. */
  get size(): number {
    return this.#cadences.size;
  }

  /** Every key's cadence, as plain data. */
  record(): Readonly<Record<string, KeyCadence>> {
    this.#record ??= Object.fromEntries(this.#cadences);
    return this.#record;
  }

  #forget(key: string): void {
    this.#cadences.delete(key);
    this.#record = undefined;
  }
}

/** A run's read waiting until `at`, and its place in the heap of `ReadsUntil`. */
interface TimedRead {
  readonly entry: QueuedRequest;
  readonly at: number;
  slot: number;
}

/**
 * Runs' reads each waiting until a time, earliest first (then by arrival): the reads that asked before
 * their need is due (registered in their turn, not choosable until then), and those put back by their
 * deferral (`readDeferral`, served in their own turn again after it). Add, remove by id and take the
 * next due in O(log n).
 */
class ReadsUntil {
  readonly #heap = new IndexedHeap<'slot', TimedRead>('slot', (a, b) => a.at < b.at || (a.at === b.at && a.entry.arrival < b.entry.arrival));
  readonly #byId = new Map<number, TimedRead>();

  /** When the earliest is due; `undefined` with none. */
  get nextAt(): number | undefined {
    return this.#heap.peek()?.at;
  }

  add(entry: QueuedRequest, at: number): void {
    const read: TimedRead = { entry, at, slot: -1 };
    this.#heap.push(read);
    this.#byId.set(entry.id, read);
  }

  remove(id: number): void {
    const read = this.#byId.get(id);
    if (read === undefined) return;
    this.#byId.delete(id);
    this.#heap.remove(read);
  }

  /** The earliest read due by `now`, taken out; `undefined` when none is. */
  takeDue(now: number): QueuedRequest | undefined {
    const read = this.#heap.peek();
    if (read === undefined || read.at > now) return undefined;
    this.remove(read.entry.id);
    return read.entry;
  }
}

/**
 * What can happen to the budget. `id`s are the shell's handles on waiting requests.
 *
 * @example
 * ```ts
 * const event: BudgetEvent = { type: 'enqueue', id: 1, ticket: { endpoint: 'status', priority: 'status', key: 'we-1' } };
 * ```
 */
export type BudgetEvent =
  | { readonly type: 'enqueue'; readonly id: number; readonly ticket: GateTicket }
  | { readonly type: 'cancel'; readonly id: number }
  | { readonly type: 'report'; readonly report: GateReport }
  /** The timer the previous step asked for has fired. */
  | { readonly type: 'wake' };

/**
 * A start the day can no longer take, refused rather than kept waiting for hours.
 *
 * @example
 * ```ts
 * const refusal: Refusal = { id: 4, resetAt: 86_402_000 };
 * ```
 */
export interface Refusal {
  readonly id: number;
  /** When the day can take a start again, at the latest. */
  readonly resetAt: number;
}

/**
 * The outcome of one step: the requests to let through now (in order), the starts refused, and when
 * to step again if nothing else happens (`undefined`: only an event can change anything, so no timer).
 *
 * @example
 * ```ts
 * const { released, refused, wakeAt } = core.step({ type: 'wake' }, now);
 * ```
 */
export interface BudgetStep {
  readonly released: readonly number[];
  readonly refused: readonly Refusal[];
  readonly wakeAt: number | undefined;
}

/**
 * The budget's state machine: the waiting requests (a fair queue per class, identical starts in line,
 * the runs' reads held until their need is due) and the account they draw on. `step` applies one event at time `now`, then lets through every
 * waiting request that may go, highest class first (see `chooseNext`). Mutable so that every step
 * costs O(log n) in the number waiting — each request is enqueued, chosen or dropped once, through
 * heaps and maps — where a copy of the state per step cost O(n) and a scan per send O(n²) in all. The
 * decisions themselves (pacing, caps, the day, the choice between classes, when a read is due and its
 * place, `readDueAt` and `readDeferral` above) are pure functions.
 *
 * It alone decides when a run's read goes: a run registers its need (`need`) and asks at once; its
 * read takes its turn in the reads class then (fair-queue.ts), is held until due (`readDueAt`) and
 * goes when the account can send it and its turn has come. The account is asked only when a request may go (`readyAt`), what it was sent
 * (`sent`) and its pace for reads (`readsPerMinute`), for the runs' fair share.
 */
export class BudgetCore {
  readonly account: LedgerAccount;
  readonly queue = new FairQueue();
  readonly cadences: KeyCadences;
  readonly #lines = new StartLines();
  /** Needs registered for a run's next read, by key, until that read asks. */
  readonly #needs = new Map<string, ReadNeed>();
  /** Reads that asked before their need is due, until it is. */
  readonly #held = new ReadsUntil();
  /** Reads put back by their deferral, until it has passed. */
  readonly #deferred = new ReadsUntil();
  /** Consecutive sends that overtook a waiting lower-class request (see `chooseNext`). */
  #bypassed = 0;

  constructor(options: RequestBudgetOptions = {}, ledger?: MemoryLedger, process?: AccountConfig['process']) {
    this.account = new LedgerAccount(ledger ?? createMemoryLedger(), { options, ...(process === undefined ? {} : { process }) });
    this.cadences = new KeyCadences(this.account.limits.minuteWindowMs);
  }

  /**
   * Registers what the run of `key` needs of its next read; its read takes it when it asks. Returns
   * how to withdraw it (a no-op once the read took it, or another need replaced it).
   *
   * @example
   * ```ts
   * const withdraw = core.need('we-1', { since: now, minMs: 500, wishMs: 2_000, maxMs: 10_000 });
   * ```
   */
  need(key: string, need: ReadNeed): () => void {
    this.#needs.set(key, need);
    return () => {
      if (this.#needs.get(key) === need) this.#needs.delete(key);
    };
  }

  /**
   * The run's share of the account: one read per this many ms for every run reading spends the pace
   * the account gives reads now. `undefined` when it gives none.
   */
  #fairMs(now: number): number | undefined {
    const perMinute = this.account.readsPerMinute(now);
    return perMinute > 0 ? (Math.max(1, this.cadences.size) * 60_000) / perMinute : undefined;
  }

  /**
   * Applies `event` at `now` and lets through what may go.
   *
   * @example
   * ```ts
   * const core = new BudgetCore();
   * core.step({ type: 'enqueue', id: 1, ticket }, 0).released; // [1]: under the limit a request goes at once
   * ```
   */
  step(event: BudgetEvent, now: number): BudgetStep {
    const refused: Refusal[] = [];
    this.#prune(now);
    this.#apply(event, now, refused);
    // An answer may free an identical start's key at once (a spacing of 0); nothing else changes the record.
    if (event.type === 'report') this.#offerFreed(this.account.prune(now));
    return this.#drain(now, refused);
  }

  #apply(event: BudgetEvent, now: number, refused: Refusal[]): void {
    switch (event.type) {
      case 'enqueue': {
        // A start the day cannot take fails at once instead of waiting hours for the window.
        const refusedUntil = fairClassOf(event.ticket.priority) === 'start' ? this.account.startRefusedUntil(now) : undefined;
        if (refusedUntil !== undefined) {
          refused.push({ id: event.id, resetAt: refusedUntil });
          return;
        }
        this.cadences.busy(event.ticket, 1, now);
        const need = this.#takeNeed(event.ticket);
        if (need !== undefined) {
          this.#hold(event.id, event.ticket, need, now);
          return;
        }
        const entry = this.queue.enqueue(event.id, event.ticket, now);
        const key = identicalStartKey(event.ticket);
        if (key === undefined || (this.#lines.join(key, entry) && this.#free(key, now))) this.queue.offer(entry);
        return;
      }
      case 'cancel': {
        // Cancellation as data: the entry leaves the queue and frees nothing else.
        this.#held.remove(event.id);
        const entry = this.queue.get(event.id);
        if (entry !== undefined) this.#leave(entry, now);
        return;
      }
      case 'report':
        if (this.account.report(event.report, now)) this.cadences.busy(event.report.ticket, -1, now);
        return;
      case 'wake':
        return;
      default:
        unreachable(event);
    }
  }

  #drain(now: number, refused: Refusal[]): BudgetStep {
    const released: number[] = [];
    for (;;) {
      this.#refuseStarts(now, refused);
      const heads: ClassHead[] = [];
      let wakeAt = Infinity;
      for (const klass of FAIR_CLASSES) {
        const head = this.#head(klass, now);
        if (head === undefined) continue;
        const readyAt = this.account.readyAt(klass, now);
        if (readyAt <= now) heads.push(head);
        else wakeAt = Math.min(wakeAt, readyAt);
      }
      const [first, ...rest] = heads;
      if (first === undefined) {
        // Identical starts waiting in line go when their key's spacing has passed; held reads when due.
        const expiry = this.queue.size > 0 ? (this.account.nextMarkExpiryAt() ?? Infinity) : Infinity;
        wakeAt = Math.min(wakeAt, expiry, this.#held.nextAt ?? Infinity);
        return { released, refused, wakeAt: Number.isFinite(wakeAt) ? wakeAt : undefined };
      }
      const { chosen, bypassed } = chooseNext([first, ...rest], this.#bypassed, this.account.limits.starvationLimit);
      this.#bypassed = bypassed;
      this.#send(chosen, now);
      released.push(chosen.id);
    }
  }

  /** While the day cannot take a start, every start that could be chosen is refused. */
  #refuseStarts(now: number, refused: Refusal[]): void {
    const starts = this.queue.of('start');
    if (starts.size === 0) return;
    const resetAt = this.account.startRefusedUntil(now);
    if (resetAt === undefined) return;
    for (let entry = starts.next(); entry !== undefined; entry = starts.next()) {
      this.#leave(entry, now);
      refused.push({ id: entry.id, resetAt });
    }
  }

  /**
   * The class's two heads, once neither is an identical start whose key is held: such a start leaves
   * the heaps (it stays first in its line) until its key is free. That only happens when a start's
   * answer came without this budget having sent it; otherwise only free keys are offered.
   */
  #head(klass: FairClass, now: number): ClassHead | undefined {
    const queue = this.queue.of(klass);
    for (;;) {
      const next = queue.next();
      const oldest = queue.oldest();
      if (next === undefined || oldest === undefined) return undefined;
      const held = this.#free(identicalStartKey(next.ticket), now) ? (this.#free(identicalStartKey(oldest.ticket), now) ? undefined : oldest) : next;
      if (held === undefined) return { klass, next, oldest };
      queue.remove(held);
    }
  }

  #send(entry: QueuedRequest, now: number): void {
    const { ticket } = entry;
    this.account.sent(ticket, now);
    this.queue.served(entry);
    this.#dequeue(entry, now);
    this.cadences.polled(ticket, entry.enqueuedAt, now, entry.cutsIn);
  }

  /** A waiting request leaves without being sent: nothing of it is on its way. */
  #leave(entry: QueuedRequest, now: number): void {
    this.#dequeue(entry, now);
    this.cadences.busy(entry.ticket, -1, now);
  }

  /** Takes `entry` out of the queue; when it was first in its identical starts' line, offers the next if its key is free. */
  #dequeue(entry: QueuedRequest, now: number): void {
    this.queue.remove(entry.id);
    this.#deferred.remove(entry.id);
    const key = identicalStartKey(entry.ticket);
    if (key === undefined) return;
    const next = this.#lines.leave(key, entry);
    if (next !== undefined && this.#free(key, now)) this.queue.offer(next);
  }

  #prune(now: number): void {
    this.#offerFreed(this.account.prune(now));
    this.cadences.prune(now);
    this.#release(now);
  }

  /**
   * The need a run registered for its read, taken by the read that asks (status or output, whatever
   * its class: a read asked again as urgent takes it too, so none is left behind).
   */
  #takeNeed(ticket: GateTicket): ReadNeed | undefined {
    const { key } = ticket;
    if (key === undefined || (ticket.endpoint !== 'status' && ticket.endpoint !== 'output')) return undefined;
    const need = this.#needs.get(key);
    if (need === undefined) return undefined;
    this.#needs.delete(key);
    return fairClassOf(ticket.priority) === 'reads' ? need : undefined;
  }

  /**
   * A read with a need takes its turn in the reads class now — the run asks for its next turn as its
   * last read answers, so a run that wishes to wait loses no turn for it — and becomes choosable when
   * due. Its wait for the account counts from then.
   */
  #hold(id: number, ticket: GateTicket, asked: ReadNeed, now: number): void {
    const fairMs = this.#fairMs(now);
    const need = retimedForShare(asked, fairMs);
    // A certain read would go ahead of the reads waiting: it waits for the tick that makes it certain.
    const dueAt = readDueAt(need, fairMs, this.queue.of('reads').size > 0);
    const defer = readDeferral(need, dueAt, fairMs);
    // Re-timed by its run's model for the run's share (`retimedForShare` gave another need) and likely by the
    // time it is due: placed in the current turn. One whose change is still unlikely keeps its run's
    // turn and is put back: where many runs' changes come at once (runs started together), placing
    // those in the current turn as well sent them ahead of the reads that were finding changes.
    const order: ReadOrder = { certain: need.certain === true, defer, inCurrentTurn: need !== asked && defer === 0 };
    const entry = this.queue.enqueue(id, ticket, Math.max(now, dueAt), order);
    if (order.defer > 0 && fairMs !== undefined) {
      // The deferral in time: until the change is likely, at most `MAX_DEFER_ROUNDS` shares of the
      // account. Counted in turns alone, it lasted as long as a turn does: on a tight account with
      // runs arriving, new runs' reads and reads that cut in keep a turn open for minutes, and the
      // most deferred read of it was passed by every other for as long (a run unread for 10 minutes).
      this.#deferred.add(entry, Math.max(now, dueAt) + order.defer * fairMs);
    }
    if (dueAt <= now) {
      this.queue.offer(entry);
      return;
    }
    this.#held.add(entry, dueAt);
  }

  /** Held reads now due become choosable; deferred reads whose deferral has passed are served in their turn. */
  #release(now: number): void {
    for (let entry = this.#held.takeDue(now); entry !== undefined; entry = this.#held.takeDue(now)) this.queue.offer(entry);
    for (let entry = this.#deferred.takeDue(now); entry !== undefined; entry = this.#deferred.takeDue(now)) this.queue.undefer(entry);
  }

  /** The first identical start in line of each key now free becomes choosable. */
  #offerFreed(keys: readonly string[]): void {
    for (const key of keys) {
      const first = this.#lines.first(key);
      if (first !== undefined && first.turnSlot < 0) this.queue.offer(first);
    }
  }

  /** Whether an identical start of `key` may go now (any other request: always). */
  #free(key: string | undefined, now: number): boolean {
    return key === undefined || this.account.startReadyAt(key) <= now;
  }
}

function unreachable(value: never): never {
  throw new Error(`Unexpected budget event: ${JSON.stringify(value)}`);
}
