import type { Subscription } from 'rxjs';
import type { Logger } from '../domain/model.js';
import type { GateReport, GateTicket } from '../domain/requests.js';
import { FlowstreamError } from '../errors/flowstream-error.js';
import { MAX_TIMER_MS } from '../errors/validation-errors.js';
import type { AccountLink, BudgetShell, SharedLink, Waiter } from './account-budget.js';
import { closedError, dayIsSpent } from './account-budget.js';
import { afterSend, identicalStartKey } from './account-rules.js';
import type { AccountAnswer, AccountConfig, AccountRecord, Verdict } from './account-rules.js';
import { FAIR_CLASSES, fairClassOf } from './fair-queue.js';
import type { FairClass } from './fair-queue.js';

/*
 * A request budget over an account kept in a store several processes share (Redis): the budget's
 * core lets requests through on a mirror of the account's record, and each is then held until
 * the shared account grants it. Only such a budget carries this code: `createRedisBudget` links it in
 * (`createSharedAccountBudget(options, shareAccount(account))`), a budget in memory never loads it.
 */

/**
 * An account kept in a store shared by several processes (Redis), asked asynchronously: this
 * process's config, and the rule book's steps as the store applies them atomically.
 */
export interface SharedAccount {
  readonly config: AccountConfig;
  /** The verdict on one request of `klass` now (`demand`: this process's runs waiting to read; for a start or abort, its starts and aborts waiting), with the record after it and the account's time. */
  request(klass: FairClass, demand: number, startKey: string | undefined): Promise<Verdict & { readonly now: number; readonly record: AccountRecord }>;
  report(answer: AccountAnswer): Promise<AccountRecord>;
  /** This process has nothing waiting, or leaves. */
  leave(): Promise<AccountRecord>;
  /** The key an identical start's mark has in the shared record (a digest: the body may hold secrets). */
  markKey(startKey: string): string;
  /** How long the store may take to answer before what cannot wait is told it is away. */
  readonly unavailableAfterMs: number;
  readonly logger?: Logger | undefined;
}

/** How long a request told to wait by the shared account waits at most before it asks again: other processes change the account too. */
const RECHECK_MS = 5_000;
/** How many times an answer is told to the shared account while it is away before the lease is left to free it. */
const REPORT_ATTEMPTS = 10;
/** How soon a request is asked again after the shared account could not be reached. */
const UNREACHABLE_RETRY_MS = 1_000;

/**
 * `account` as a budget's link: `createSharedAccountBudget(options, shareAccount(account))` is the budget
 * with the account kept there.
 *
 * @example
 * ```ts
 * const budget = createSharedAccountBudget({ ...config.options, scheduler }, shareAccount(account));
 * ```
 */
export function shareAccount(account: SharedAccount): SharedLink {
  return { process: account.config.process, link: (shell) => linkAccount(account, shell) };
}

function linkAccount(account: SharedAccount, shell: BudgetShell): AccountLink {
  const { scheduler, core, mirror, waiters, now, follow, dispatch, publish, leaveQueue } = shell;

  interface Held {
    readonly id: number;
    readonly waiter: Waiter;
    readonly klass: FairClass;
    readonly startKey: string | undefined;
    readonly at: number;
  }
  /** Let through by the scheduler, waiting for the shared account's grant: highest class first, then oldest. */
  const held: Held[] = [];
  /** When each request the shared account granted went: its answer's anchor (service.md §2.1). */
  const grantedAt = new Map<GateTicket, number>();
  /** One call to the shared account at a time, so an outage never piles calls up behind it. */
  let asking = false;
  /** Something was let through or left while the account was being asked: ask again at once. */
  let changed = false;
  const changedMeanwhile = (): boolean => changed;
  let retry: Subscription | undefined;
  let callDeadline: Subscription | undefined;
  /** Whether the shared account answered the last call within `unavailableAfterMs`. */
  let reachable = true;
  const isReachable = (): boolean => reachable;
  /** This process's reads are declared to the account (withdrawn once nothing waits). */
  let declared = false;
  /** Requests that came while the account was away: each is given up once it has waited `unavailableAfterMs`. */
  const giveUps = new Map<number, Subscription>();
  /**
   * What the service's last count (its `X-RateLimit-Remaining-*` headers, service.md §2.1) leaves for
   * this process: while the shared account is away no process of the account is granted anything, so
   * this count is the account's; `close()` spends it on held aborts.
   */
  let serviceLeft: number | undefined;
  let closing: Promise<void> | undefined;
  const isClosed = (): boolean => shell.closed;
  /** Told when nothing waits or is held any more, while `close()` waits for the aborts. */
  let drained: (() => void) | undefined;

  function hold(id: number, waiter: Waiter, at: number): void {
    const klass = fairClassOf(waiter.ticket.priority);
    // Held in the classes' order (abort first), first come first within a class.
    const order = FAIR_CLASSES.indexOf(klass);
    const index = held.findIndex((other) => FAIR_CLASSES.indexOf(other.klass) > order);
    const startKey = identicalStartKey(waiter.ticket);
    remember(startKey);
    held.splice(index < 0 ? held.length : index, 0, { id, waiter, klass, startKey, at });
    changed = true;
    void ask();
  }

  /** Takes `entry` out of the held ones; it was not sent, so the budget's core is told no answer will come. */
  function unhold(entry: Held): void {
    const index = held.indexOf(entry);
    if (index >= 0) held.splice(index, 1);
    giveUps.get(entry.id)?.unsubscribe();
    giveUps.delete(entry.id);
    dispatch({ type: 'report', report: { ticket: entry.waiter.ticket, httpStatus: undefined, rateLimit: {} } });
  }

  /** The identical-start keys this process used, by their key in the shared record. */
  const startKeys = new Map<string, string>();
  function remember(startKey: string | undefined): void {
    if (startKey !== undefined) startKeys.set(account.markKey(startKey), startKey);
  }

  /**
   * The shared account's record, with what this process holds counted as sent, is the budget
   * core's mirror. Its identical-start marks are by digest: the mirror has those of the keys this process
   * used (another process's marks show in the shared account's verdict). A mark the mirror has and the
   * shared record lacks (a start refused while the account was away never reached it; pruned there
   * first; Redis lost the account) stays in the mirror until it expires there: the budget's core offers an
   * identical start waiting in line when its key's mark expires, and one that vanished would never.
   */
  function adopt(record: AccountRecord): void {
    // The record's times are the account's clock, which this process's may be behind.
    follow(record.at);
    const starts: Record<string, AccountRecord['starts'][string]> = {};
    for (const [digest, mark] of Object.entries(record.starts)) {
      const startKey = startKeys.get(digest);
      if (startKey !== undefined) starts[startKey] = mark;
    }
    for (const [startKey, mark] of Object.entries(mirror.record.starts)) starts[startKey] ??= mark;
    for (const digest of [...startKeys.keys()]) if (record.starts[digest] === undefined && !held.some((entry) => entry.startKey === startKeys.get(digest))) startKeys.delete(digest);
    let next: AccountRecord = { ...record, starts };
    for (const entry of held) next = afterSend(next, entry.klass, entry.startKey, Math.max(entry.at, next.at), account.config);
    mirror.replace(next);
  }

  function demand(): number {
    const depths = core.queue.depths();
    return depths.status + depths.output + held.filter((entry) => entry.klass === 'reads').length;
  }

  /** This process's starts and aborts waiting, here or for the shared account: what a start's or abort's claim on the account's pace counts. */
  function urgent(): number {
    const depths = core.queue.depths();
    return depths.abort + depths.start + held.filter((entry) => entry.klass === 'abort' || entry.klass === 'start').length;
  }

  /**
   * Asks the shared account for the first request held, one call at a time. With nothing held or
   * waiting, it withdraws this process's reads from the account — and while the account is away,
   * that call is the one that finds it back.
   */
  async function ask(): Promise<void> {
    if (asking || isClosed()) return;
    const entry = held[0];
    // With nothing held, the reads are withdrawn only once none waits here either (the budget's core lets
    // them through at this process's share: between two of them this process keeps its turn).
    if (entry === undefined && isReachable() && (!declared || demand() > 0)) return;
    asking = true;
    changed = false;
    retry?.unsubscribe();
    retry = undefined;
    // The call is not abandoned at its deadline: it stays the one call on its way, and its answer
    // (when the account is back) is used. Only what cannot wait is told that it is away. A process
    // that stalled runs its timers before it reads the answers that came meanwhile: they get one turn.
    callDeadline = scheduler.schedule(() => {
      callDeadline = scheduler.schedule(unreachable, 0);
    }, account.unavailableAfterMs);
    let answer: (Verdict & { readonly now: number; readonly record: AccountRecord }) | undefined;
    try {
      if (entry === undefined) await account.leave();
      else {
        if (entry.klass === 'reads') declared = true;
        answer = await account.request(entry.klass, entry.klass === 'abort' || entry.klass === 'start' ? urgent() : demand(), entry.startKey);
      }
    } catch {
      // The store refused the call (a client that gives up on commands while it is away): asked again soon.
      endCallDeadline();
      asking = false;
      unreachable();
      if (!isClosed()) retry = scheduler.schedule(() => void ask(), UNREACHABLE_RETRY_MS);
      return;
    }
    endCallDeadline();
    asking = false;
    reachable = true;
    // A grant is counted at the account's time: its answer is anchored on that too (grantedAt below).
    if (answer !== undefined) follow(answer.now);
    // The account answers: what came while it was away waits as any request does.
    for (const giveUp of giveUps.values()) giveUp.unsubscribe();
    giveUps.clear();
    if (isClosed()) return;
    if (entry === undefined || answer === undefined) {
      declared = false;
      void ask();
      return;
    }
    const stillHeld = held.includes(entry);
    if (answer.verdict === 'granted') {
      // The request goes if it is still held (it may have left meanwhile: the send it was granted is
      // then counted and unused, never the other way round).
      if (stillHeld) {
        held.splice(held.indexOf(entry), 1);
        grantedAt.set(entry.waiter.ticket, now());
        if (serviceLeft !== undefined) serviceLeft -= 1;
        entry.waiter.release();
      }
      adopt(answer.record);
      // Left meanwhile: the account counts a send whose answer will never come. It is told so at once,
      // or an identical start's mark would stay taken (for every process) until this process's lease ran out.
      if (!stillHeld) tellShared({ sentAt: answer.now, inFlight: 0, httpStatus: undefined, rateLimit: {}, startKey: entry.startKey });
    } else if (answer.verdict === 'refused') {
      adopt(answer.record);
      if (stillHeld) {
        unhold(entry);
        entry.waiter.refuse(dayIsSpent(entry.waiter.ticket, { id: entry.id, resetAt: answer.at }, answer.now));
      }
    } else {
      adopt(answer.record);
      // Another process's answer may free the account before then (an identical start answered, a
      // cap lifted): asked again at least every few seconds; a request let through meanwhile at once.
      if (!changedMeanwhile()) retry = scheduler.schedule(() => void ask(), Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil(Math.min(answer.at - answer.now, RECHECK_MS)))));
    }
    dispatch({ type: 'wake' });
    drainedCheck();
    if (answer.verdict !== 'wait' || changedMeanwhile()) void ask();
  }

  /**
   * Tells the shared account an answer (a 429 pauses every process, an identical start's mark is freed).
   * While the store is away it is told again, every `UNREACHABLE_RETRY_MS`, up to `REPORT_ATTEMPTS`
   * times; past that the process's lease frees what the answer would have, and the loss is logged.
   */
  const reportRetries = new Set<Subscription>();
  function tellShared(answer: AccountAnswer, attempt = 1): void {
    account.report(answer).then(
      (record) => {
        adopt(record);
        dispatch({ type: 'wake' });
      },
      (error: unknown) => {
        if (isClosed()) return;
        if (attempt >= REPORT_ATTEMPTS) {
          account.logger?.warn('flowstream: the shared request budget could not be told an answer; its lease will free what the answer would have', { httpStatus: answer.httpStatus, error });
          return;
        }
        const again = scheduler.schedule(() => {
          reportRetries.delete(again);
          tellShared(answer, attempt + 1);
        }, UNREACHABLE_RETRY_MS);
        reportRetries.add(again);
      },
    );
  }

  function endCallDeadline(): void {
    callDeadline?.unsubscribe();
    callDeadline = undefined;
  }

  /**
   * The shared account did not answer in time: fail closed — nothing is sent without its grant, and
   * what cannot wait fails with a typed error rather than hang. Aborts wait for it (service.md §3.5:
   * an execution left running spends credits), however long it is away.
   */
  function unreachable(): void {
    reachable = false;
    for (const entry of [...held]) {
      if (entry.klass === 'abort') continue;
      unhold(entry);
      entry.waiter.refuse(unavailableError(account.unavailableAfterMs));
    }
    for (const [id, waiter] of [...waiters]) {
      if (fairClassOf(waiter.ticket.priority) === 'abort') continue;
      leaveQueue(id);
      waiter.refuse(unavailableError(account.unavailableAfterMs));
    }
    publish();
    drainedCheck();
  }

  /**
   * Leaves the shared account within `unavailableAfterMs`: held aborts get their grant until then;
   * what is still held when the account is away goes on the service's own count, and each abort not
   * sent is refused and logged with its execution id.
   */
  async function leaveShared(): Promise<void> {
    for (const [id, waiter] of [...waiters]) {
      if (fairClassOf(waiter.ticket.priority) === 'abort') continue;
      leaveQueue(id);
      waiter.refuse(closedError());
    }
    for (const entry of [...held]) {
      if (entry.klass === 'abort') continue;
      unhold(entry);
      entry.waiter.refuse(closedError());
    }
    publish();
    let deadlineTimer: Subscription | undefined;
    const deadline = new Promise<void>((resolve) => {
      deadlineTimer = scheduler.schedule(() => {
        resolve();
      }, account.unavailableAfterMs);
    });
    if (waiters.size > 0 || held.length > 0) {
      await Promise.race([
        deadline,
        new Promise<void>((resolve) => {
          drained = resolve;
        }),
      ]);
      drained = undefined;
    }
    shell.stop();
    retry?.unsubscribe();
    for (const again of reportRetries) again.unsubscribe();
    reportRetries.clear();
    endCallDeadline();
    const left = [...held.map((entry) => entry.waiter), ...waiters.values()];
    held.length = 0;
    waiters.clear();
    for (const waiter of left) {
      if (!isReachable() && serviceLeft !== undefined && serviceLeft > 0) {
        serviceLeft -= 1;
        waiter.release();
        continue;
      }
      const executionId = waiter.ticket.key;
      account.logger?.warn('flowstream: the request budget closed before this abort could be sent: the execution may still be running', { executionId, redis: isReachable() ? 'reachable' : 'unreachable' });
      waiter.refuse(abortNotSentError(executionId));
    }
    shell.completeObservers();
    if (isReachable()) await Promise.race([account.leave().catch(() => undefined), deadline]);
    deadlineTimer?.unsubscribe();
  }

  function drainedCheck(): void {
    if (waiters.size === 0 && held.length === 0) drained?.();
  }

  return {
    hold,
    joined(id: number, waiter: Waiter): void {
      // The shared account is away: what cannot wait for it waits at most `unavailableAfterMs`.
      if (reachable || fairClassOf(waiter.ticket.priority) === 'abort') return;
      giveUps.set(
        id,
        scheduler.schedule(() => {
          const entry = held.find((other) => other.id === id);
          if (entry !== undefined) unhold(entry);
          else leaveQueue(id);
          waiter.refuse(unavailableError(account.unavailableAfterMs));
          publish();
          drainedCheck();
        }, account.unavailableAfterMs),
      );
    },
    left(id: number): void {
      giveUps.get(id)?.unsubscribe();
      giveUps.delete(id);
      // Maybe the last read waiting here: the account hears that this process has none any more.
      void ask();
    },
    withdraw(id: number): boolean {
      const entry = held.find((other) => other.id === id);
      if (entry === undefined) return false;
      unhold(entry);
      return true;
    },
    reported(report: GateReport): void {
      const { rateLimit } = report;
      const counts = [rateLimit.remainingPerMinute, rateLimit.remainingPerDay].filter((count) => count !== undefined);
      if (counts.length > 0) serviceLeft = Math.min(...counts) - core.account.inFlight.size;
      const answer = core.account.lastAnswer;
      const sentAt = grantedAt.get(report.ticket);
      grantedAt.delete(report.ticket);
      if (answer === undefined) return;
      remember(answer.startKey);
      tellShared({ ...answer, sentAt: sentAt ?? answer.sentAt });
    },
    drainedCheck,
    get closing(): boolean {
      return closing !== undefined;
    },
    close(): Promise<void> {
      closing ??= leaveShared();
      return closing;
    },
  };
}

function abortNotSentError(executionId: string | undefined): FlowstreamError {
  if (executionId === undefined) return closedError();
  return new FlowstreamError(`The request budget closed before the abort of ${executionId} could be sent: the execution may still be running`, 'BUDGET_CLOSED');
}

function unavailableError(afterMs: number): FlowstreamError {
  return new FlowstreamError(`Redis did not answer the request budget within ${afterMs} ms: nothing was sent`, 'BUDGET_UNAVAILABLE');
}
