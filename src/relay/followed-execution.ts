import type { Observable, Subscription } from 'rxjs';
import type { ExecutionStatus, RunResult } from '../domain/model.js';
import { isNotFoundError } from '../errors/api-errors.js';
import type { RunEvent } from '../runs/events.js';
import { hubPlaceOf } from '../runs/run-hub.js';
import { type RunStop, stoppedEnding } from '../runs/run-lifecycle.js';
import { type RunState, RunStateFold } from '../runs/run-state.js';
import { FlowstreamError } from '../errors/flowstream-error.js';
import { EventLog, type LoggedEvent } from './event-log.js';

/** How the follow of an execution ended: its `finished` event came, or it failed (`error`), or the relay closed. */
export type FollowEnd = { readonly kind: 'finished'; readonly result: RunResult } | { readonly kind: 'error'; readonly error: unknown } | { readonly kind: 'closed' };

/** What a follow needs from the relay: how to abort its execution, where to say it ended, and when it is used and unused. */
export interface FollowHooks {
  abort(executionId: string): Promise<void>;
  /** Tells the followers of the execution elsewhere (the hub) that it is being aborted while it runs. */
  aborting(executionId: string): void;
  /** The execution's status as the service shows it now, read apart from the follow. */
  status(executionId: string): Promise<ExecutionStatus>;
  /** The execution's result as the service shows it now, read apart from the follow; `undefined` while it goes on. */
  result(executionId: string): Promise<RunResult | undefined>;
  ended(follow: FollowedExecution): void;
  /** Its first user came (a viewer, or a cancel), or one came back after all had left. */
  used(follow: FollowedExecution): void;
  /** Its last user left: no viewer reads it and no cancel waits on it. */
  unused(follow: FollowedExecution): void;
  /** How many of its latest events a follow keeps at least (and at most twice as many), for resuming viewers. */
  readonly keepEvents: number;
}

/**
 * The relay's one follow of one execution, shared by all its viewers: the events in order with their
 * sequence numbers and, once it came, the end. Viewers read from it at their own pace (each holds only
 * its place) and come and go without touching the follow; only `cancel()` aborts the execution, once.
 */
export class FollowedExecution {
  readonly executionId: string;
  /**
   * The name of the numbering this follow's sequence numbers belong to, so a viewer resuming names the
   * numbering its number is from: the hub's sequence of the execution when the events come with their
   * places in it (the same numbers in every process sharing the hub), else this follow's own (a relay
   * restarted, or one that had forgotten the execution, numbers afresh from 1).
   */
  get followId(): string {
    return this.#hubLog ?? this.#ownId;
  }

  readonly #ownId: string = crypto.randomUUID();
  #hubLog: string | undefined;
  readonly #log: EventLog;
  /** The events folded as they come (O(1) each), for a late viewer's snapshot. */
  readonly #fold = new RunStateFold();
  readonly #hooks: FollowHooks;
  readonly #subscription: Subscription;
  readonly #ready: Promise<void>;
  #markReady: () => void = () => undefined;
  #changed: Promise<void>;
  #markChanged: () => void = () => undefined;
  #end: FollowEnd | undefined;
  #stop: RunStop | undefined;
  #aborting: Promise<void> | undefined;
  /** The answer of the cancels of the abort on its way or landed (`cancel`). */
  #afterAbort: Promise<RunResult> | undefined;
  /** Viewers reading it and requests waiting on it now. */
  #users = 0;
  readonly #waitingForResult = new Set<{ resolve: (result: RunResult) => void; reject: (error: unknown) => void }>();

  constructor(executionId: string, events: Observable<RunEvent>, hooks: FollowHooks) {
    this.executionId = executionId;
    this.#hooks = hooks;
    this.#log = new EventLog(hooks.keepEvents);
    this.#ready = new Promise((resolve) => {
      this.#markReady = resolve;
    });
    this.#changed = this.#nextChange();
    this.#subscription = events.subscribe({
      next: (event) => {
        this.#record(event);
      },
      error: (error: unknown) => {
        this.#finish({ kind: 'error', error });
      },
      complete: () => {
        const last = this.#log.last?.event;
        this.#finish(last?.type === 'finished' ? { kind: 'finished', result: last.result } : { kind: 'closed' });
      },
    });
  }

  /** Resolves once the first event came or the follow ended: then the execution is known to exist, or `end` says why not. */
  async ready(): Promise<{ readonly events: number; readonly end: FollowEnd | undefined }> {
    await this.#ready;
    return { events: this.#log.lastSeq, end: this.#end };
  }

  /** How it ended, or `undefined` while it goes on. */
  get end(): FollowEnd | undefined {
    return this.#end;
  }

  /** The events after sequence number `afterSeq`, in order (see `holds`: a long history keeps only its latest). */
  after(afterSeq: number): readonly LoggedEvent[] {
    return this.#log.after(afterSeq);
  }

  /** Whether every event after `afterSeq` is still kept; a viewer from before them is given a `snapshot()`. */
  holds(afterSeq: number): boolean {
    return this.#log.holds(afterSeq);
  }

  /** The state the events so far add up to, and the sequence number of the last of them. */
  snapshot(): { readonly seq: number; readonly state: RunState } {
    return { seq: this.#log.lastSeq, state: this.#fold.state };
  }

  /** The sequence number of the last event so far, 0 before the first. */
  get lastSeq(): number {
    return this.#log.lastSeq;
  }

  /** Resolves at the next event or at the end. */
  changed(): Promise<void> {
    return this.#changed;
  }

  /**
   * Aborts the execution (once, however many ask; again only after an abort was given up) and
   * resolves with its result once the service shows it ended — `endedBy: 'aborted'` when the abort
   * ended it (service.md §3.5: the service itself only says `failed`). The abort is sent through an
   * outage until the service takes it (`FollowHooks.abort`), and the result waits for it: it rejects
   * when the abort was given up, unless the execution ended meanwhile (then its result, with its own
   * ending). A finished execution is not aborted: its result comes at once. A failed one whose other
   * branches ran on when the follow ended (`runningNodes`, service.md §3.3) is aborted, once, to stop
   * them, as it is when the follow has not seen it end; its result keeps its own ending.
   */
  cancel(): Promise<RunResult> {
    const end = this.#end;
    const branchesLeft = end?.kind === 'finished' && end.result.runningNodes.length > 0;
    if ((end === undefined || branchesLeft) && this.#aborting === undefined) {
      this.#aborting = (branchesLeft ? this.#hooks.abort(this.executionId) : this.#abortUnlessFinished()).catch((error: unknown) => {
        this.#aborting = undefined;
        this.#stop = undefined;
        throw error;
      });
    }
    const aborting = this.#aborting;
    if (aborting === undefined) return this.#result();
    if (this.#afterAbort === undefined) {
      // One answer for every cancel of this abort; tried again by the next cancel if it failed.
      const answer = aborting.then(
        () => this.#resultAfterAbort(),
        (givenUp: unknown) => this.#endedAnyway(givenUp),
      );
      this.#afterAbort = answer;
      answer.catch(() => {
        if (this.#afterAbort === answer) this.#afterAbort = undefined;
      });
    }
    return this.#afterAbort;
  }

  /**
   * The result once the abort landed: the follow's, or the execution's end read apart from the follow,
   * whichever comes first. The follow may never hear again — its hub's store away, or an outage it did
   * not read through while the abort did — and the service shows an aborted execution ended at once
   * (service.md §3.5), so the answer does not wait on it. It fails only when both fail: with the follow's error.
   */
  async #resultAfterAbort(): Promise<RunResult> {
    const end = this.#end;
    if (end?.kind === 'finished') return end.result;
    try {
      return await Promise.any([this.#result(), this.#readEnd()]);
    } catch (error: unknown) {
      throw error instanceof AggregateError ? error.errors[0] : error;
    }
  }

  /**
   * The result when the abort was given up, if the execution ended meanwhile (it finished, or failed,
   * during the outage): the follow's end, as its viewers were told it, or else the end the service
   * shows now, with the execution's own ending (the abort never landed: `stop` is cleared by then).
   * Otherwise the abort's error.
   */
  async #endedAnyway(givenUp: unknown): Promise<RunResult> {
    const end = this.#end;
    if (end?.kind === 'finished') return end.result;
    return this.#readEnd().catch(() => {
      throw givenUp;
    });
  }

  /** The execution's end as the service shows it now, read apart from the follow, as this follow would say it. */
  async #readEnd(): Promise<RunResult> {
    const read = await this.#hooks.result(this.executionId);
    if (read === undefined) throw new FlowstreamError('The service does not show the execution ended yet', 'EXECUTION_NOT_ENDED');
    return stoppedEnding(this.#stop, { type: 'finished', executionId: this.executionId, result: read }).result;
  }

  /** The result the follow ends with, at once when it has ended. */
  #result(): Promise<RunResult> {
    return new Promise<RunResult>((resolve, reject) => {
      const end = this.#end;
      if (end === undefined) this.#waitingForResult.add({ resolve, reject });
      else if (end.kind === 'finished') resolve(end.result);
      else reject(failureOf(end));
    });
  }

  /**
   * Aborts the execution unless the service already shows it ended. The service may show the end
   * before the follow's `finished` came: a finished execution is not aborted, and a failed one keeps
   * its own ending (the abort still stops branches that run on, service.md §3.3). A follow that has
   * heard nothing yet — its hub's store or the service away, or just new — is not waited for: the
   * status is read apart from it, and when even that read fails (other than for an unknown execution)
   * the abort goes regardless, since an abort of an ended execution changes nothing (§3.5).
   */
  async #abortUnlessFinished(): Promise<void> {
    const status = this.#log.last === undefined ? await this.#hooks.status(this.executionId).catch((error: unknown) => {
      if (isNotFoundError(error)) throw error;
      return undefined;
    }) : this.#fold.state.status;
    if (status === 'finish' || this.#end !== undefined) return;
    this.#stop = { by: 'aborted', afterEnd: status === 'failed' };
    if (!this.#stop.afterEnd) this.#hooks.aborting(this.executionId);
    await this.#hooks.abort(this.executionId);
  }

  /**
   * One more user of the follow (a viewer's stream, a request waiting on it) until the returned release
   * is called; a second call of it does nothing. The relay lets go of a follow no one uses.
   */
  use(): () => void {
    this.#users += 1;
    if (this.#users === 1) this.#hooks.used(this);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#users -= 1;
      if (this.#users === 0) this.#hooks.unused(this);
    };
  }

  /** Stops following (the execution runs on) and ends every viewer's stream. */
  close(): void {
    this.#subscription.unsubscribe();
    this.#finish({ kind: 'closed' });
  }

  #record(event: RunEvent): void {
    const place = hubPlaceOf(event);
    if (this.#log.last === undefined) this.#hubLog = place?.log;
    const { event: kept } = this.#log.append(event.type === 'finished' ? stoppedEnding(this.#stop, event) : event, this.#hubLog !== undefined && place?.log === this.#hubLog ? place.seq : undefined);
    this.#fold.apply(kept);
    this.#markReady();
    this.#announce();
  }

  /** Wakes whoever waits for a change, and sets up the wait for the next one. */
  #announce(): void {
    const wake = this.#markChanged;
    this.#changed = this.#nextChange();
    wake();
  }

  #nextChange(): Promise<void> {
    return new Promise((resolve) => {
      this.#markChanged = resolve;
    });
  }

  #finish(end: FollowEnd): void {
    if (this.#end !== undefined) return;
    this.#end = end;
    this.#markReady();
    this.#announce();
    for (const waiting of this.#waitingForResult) {
      if (end.kind === 'finished') waiting.resolve(end.result);
      else waiting.reject(failureOf(end));
    }
    this.#waitingForResult.clear();
    this.#hooks.ended(this);
  }
}

/** Why a follow that did not finish gives no result: the watch's own error, or the relay closing. */
function failureOf(end: FollowEnd): Error {
  if (end.kind === 'error' && end.error instanceof Error) return end.error;
  return new FlowstreamError('The relay stopped following the execution before it ended', 'RELAY_CLOSED');
}
