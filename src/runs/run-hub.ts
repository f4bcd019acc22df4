import { asapScheduler, type MonoTypeOperatorFunction, Observable, type Observer, type Subscriber, type Subscription, tap, type TeardownLogic } from 'rxjs';
import { WorkflowFailedError } from '../errors/run-errors.js';
import type { FinishedEvent, RunEvent } from './events.js';
import { abortInBackground, type ExecutionSource, runLifecycle, type RunSettings } from './run-lifecycle.js';
import { readingOf, type RunState, RunStateFold, withReading } from './run-state.js';

/*
 * Sharing one run among those who follow it: a hub (`RunHub`: one poll stream per execution in a
 * process, a run offering its own), how a run stands for a newcomer (`RunStand`), `shareRun` for one
 * Observable's subscribers, and a watch through a hub (`sharedWatch`).
 */

/**
 * Where the runs of a process meet: one poll stream per execution, however many follow it. A client
 * has one (`ClientOptions.hub`, default its own in-memory hub); give the same hub to several clients,
 * or to a relay, and they share it too.
 *
 * @example
 * ```ts
 * const hub = createRunHub();
 * const client = createClient({ apiKey, baseUrl, hub });
 * // Two watches of one execution: the service sees one poll stream.
 * client.watch('we-1').subscribe(render);
 * client.watch('we-1').subscribe(log);
 * ```
 */
export interface RunHub {
  /**
   * The events of execution `executionId`, shared by every follower in this hub: the first follower
   * subscribes to `start()` (its poll of the execution), a later one first gets one `snapshot` event
   * (the state so far), then the live events; a run of this hub that started the execution (see
   * `lead`) is followed instead of a poll. The poll is unsubscribed when the last follower leaves
   * (not in the same task: a follower coming straight back keeps it); the stream ends with the
   * execution's `finished`, or errors as the poll does. Each event stands at a place in the hub's
   * numbering of the execution, the same for every follower (see {@link HubPlace}): a relay given the
   * hub uses it for its event ids.
   */
  follow(executionId: string, start: () => Observable<RunEvent>): Observable<RunEvent>;
  /**
   * `run`'s events, passed through unchanged, and offered to this hub's followers of its execution
   * from its `started` on: a `follow` of that execution joins the run instead of polling it again.
   * Should the run stop before `finished` (unsubscribed, detached, an error) while others still
   * follow, they go on with a poll of their own.
   */
  lead(run: Observable<RunEvent>): Observable<RunEvent>;
  /** How many follow the execution in this hub now: its followers, and one more while a run leads it. */
  followers(executionId: string): number;
  /**
   * Says that one of the hub's users (a relay's cancel) is aborting `executionId` while it runs, so that
   * its followers in every process sharing the hub are told it ended `aborted`, as the one that aborted
   * is (the service itself only says `failed`, service.md §3.5). Never fails: a hub that cannot record it
   * says so in its log. Optional: a hub of one process has nothing to share.
   */
  aborting?(executionId: string): void;
}

/**
 * Where a hub's event stands in the hub's sequence of its execution: `seq` counts 1, 2, 3… in the
 * sequence named `log` (a new sequence when the hub follows the execution afresh). Every follower of
 * the sequence sees each event at the same place — in every process, for a hub shared through Redis —
 * so a viewer can resume after a `seq` wherever it reconnects. A late follower's `snapshot` stands at
 * the place of the last event it stands for.
 */
interface HubPlace {
  readonly seq: number;
  readonly log: string;
}

const placeOfEvent = new WeakMap<RunEvent, HubPlace>();

/** The place a hub gave `event` in its execution's sequence, if it came from a hub. */
export function hubPlaceOf(event: RunEvent): HubPlace | undefined {
  return placeOfEvent.get(event);
}

/** `event`, marked as standing at `place` (see {@link hubPlaceOf}). */
export function atHubPlace<E extends RunEvent>(event: E, place: HubPlace): E {
  placeOfEvent.set(event, place);
  return event;
}

/** A fresh name for a hub's sequence of an execution: random, so a restarted process never reuses one. */
export function newLogName(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * The events that bring a newcomer to how `stand` stands, at their places in a sequence whose last
 * event is `lastSeq`: the `snapshot` at the last event's place, or, once the run has ended, at the
 * place before `finished`, which comes again at its own.
 */
export function catchUpAt(stand: RunStand, lastSeq: number, log: string): readonly RunEvent[] {
  const events = stand.catchUp();
  const from = lastSeq - events.length + 1;
  return events.map((event, index) => atHubPlace(event, { seq: Math.max(0, from + index), log }));
}

/** What a run leading an execution in a hub feeds: each of its events, and its stop. */
interface LedExecution {
  offer(event: RunEvent): void;
  leadEnded(): void;
}

/**
 * `run` leading its execution in a hub (`RunHub.lead`): at its first event of an execution (not a
 * `snapshot`), `take` gives what it leads, or nothing (the run just goes on); that hears each event,
 * and once when the run stops — its end, its error or its unsubscription.
 */
export function leadThrough(run: Observable<RunEvent>, take: (executionId: string) => LedExecution | undefined): Observable<RunEvent> {
  return new Observable<RunEvent>((subscriber) => {
    let led: LedExecution | undefined;
    let decided = false;
    const stop = (): void => {
      led?.leadEnded();
      led = undefined;
    };
    return run
      .pipe(
        tap({
          next: (event) => {
            if (!decided && event.type !== 'snapshot') {
              decided = true;
              led = take(event.executionId);
            }
            led?.offer(event);
          },
          error: stop,
          complete: stop,
          unsubscribe: stop,
        }),
      )
      .subscribe(subscriber);
  });
}

/**
 * Creates an in-memory {@link RunHub}: the runs and watches of one process (or of every client given
 * it) share one poll stream per execution.
 *
 * @example
 * ```ts
 * const hub = createRunHub();
 * const client = createClient({ apiKey, baseUrl, hub });
 * const relay = createRunRelay({ client, tokens, hub });
 * ```
 */
export function createRunHub(): RunHub {
  const executions = new Map<string, FollowedRun>();
  const entryOf = (executionId: string): FollowedRun => {
    const known = executions.get(executionId);
    if (known !== undefined) return known;
    const created: FollowedRun = new FollowedRun(() => {
      if (executions.get(executionId) === created) executions.delete(executionId);
    }, newLogName());
    executions.set(executionId, created);
    return created;
  };
  return {
    follow: (executionId, start) => new Observable<RunEvent>((subscriber) => entryOf(executionId).join(subscriber, start)),
    lead: (run) =>
      // An execution already followed here (by a poll) is not led twice: the run just goes on.
      leadThrough(run, (executionId) => {
        if (executions.has(executionId)) return undefined;
        const led = entryOf(executionId);
        led.lead();
        return led;
      }),
    followers: (executionId) => executions.get(executionId)?.followers ?? 0,
  };
}

/**
 * One execution followed in a hub — or one run shared by `shareRun` — its followers, how it stands,
 * and what feeds it (a leading run, or a poll: the shared run itself). `forget` hears once it is over
 * for its owner, `final` when it ended with its `finished`. A hub's gives each event its place in the
 * sequence named `log` (see {@link HubPlace}); a shared run's events keep the places they have.
 */
class FollowedRun {
  #stand = new RunStand();
  /** This follow's sequence of the execution: its name, and the place of its last event. */
  readonly #log: string | undefined;
  #seq = 0;
  /**
   * Those following, in the order they came: replaced on every join and leave, never changed in place,
   * so an event goes to those following when it came (as a Subject does, without its subscriptions).
   */
  #following: readonly Subscriber<RunEvent>[] = [];
  readonly #forget: (final: boolean) => void;
  /** How it ended, once it did: a newcomer to one kept after its end (see `shareRun`, `shareOnce`) gets how it stood, and this. */
  #ended: { readonly error: unknown } | 'completed' | undefined;
  #led = false;
  #start: (() => Observable<RunEvent>) | undefined;
  #poll: Subscription | undefined;
  /** The poll's unsubscription once the last follower left, held until the current task is over. */
  #leaving: Subscription | undefined;
  /** A resumed poll's first reading is still coming (see `#startPoll`). */
  #catchingUp = false;

  constructor(forget: (final: boolean) => void, log?: string) {
    this.#forget = forget;
    this.#log = log;
  }

  get followers(): number {
    return this.#following.length + (this.#led ? 1 : 0);
  }

  join(subscriber: Subscriber<RunEvent>, start: () => Observable<RunEvent>): TeardownLogic {
    this.#start ??= start;
    for (const event of this.#log === undefined ? this.#stand.catchUp() : catchUpAt(this.#stand, this.#seq, this.#log)) subscriber.next(event);
    const ended = this.#ended;
    if (ended === 'completed') subscriber.complete();
    else if (ended !== undefined) subscriber.error(ended.error);
    // A follower that had enough of the snapshot (`take(1)`) never joins.
    if (subscriber.closed) return undefined;
    this.#following = [...this.#following, subscriber];
    this.#leaving?.unsubscribe();
    this.#leaving = undefined;
    if (!this.#led) this.#poll ??= this.#startPoll(start);
    return () => {
      this.#following = this.#following.filter((other) => other !== subscriber);
      if (this.followers > 0 || this.#ended !== undefined) return;
      // A follower that comes back in the same task (React's StrictMode mounting twice, a switch from
      // one subscriber to the next) keeps the poll rather than ending it and starting another.
      this.#leaving ??= asapScheduler.schedule(() => {
        this.#leaving = undefined;
        if (this.followers > 0) return;
        this.#forget(false);
        this.#poll?.unsubscribe();
        this.#poll = undefined;
      });
    };
  }

  /** A run of this hub started the execution: its events feed the followers. */
  lead(): void {
    this.#led = true;
  }

  /** One event of the execution, from its leading run or its poll. */
  offer(event: RunEvent): void {
    this.#stand.see(event);
    this.#emit(event);
  }

  /** Gives `event` the next place in this follow's sequence, and to the followers. */
  #emit(event: RunEvent): void {
    this.#seq += 1;
    const placed = this.#log === undefined ? event : atHubPlace(event, { seq: this.#seq, log: this.#log });
    for (const follower of this.#following) follower.next(placed);
  }

  /** The leading run stopped: over with its `finished`; else those still following go on with a poll. */
  leadEnded(): void {
    if (!this.#led) return;
    this.#led = false;
    const start = this.#start;
    if (this.#stand.finished !== undefined || this.#following.length === 0 || start === undefined) {
      this.#forget(false);
      this.#end(undefined);
      return;
    }
    this.#poll = this.#startPoll(start, true);
  }

  /**
   * Subscribes to the poll. `resuming`: the followers saw the execution up to now (a leading run
   * stopped), so the poll's first reading, which repeats it from the start (`started` again), comes
   * as one `snapshot` of the state it reads.
   */
  #startPoll(start: () => Observable<RunEvent>, resuming = false): Subscription {
    this.#catchingUp = resuming;
    if (resuming) this.#stand = new RunStand();
    return start().subscribe(new PollFeed(this));
  }

  /** One event of the poll. */
  polled(event: RunEvent): void {
    if (!this.#catchingUp) {
      this.offer(event);
      return;
    }
    this.#stand.see(event);
    const reading = readingOf(event);
    if (reading !== undefined && event !== reading.events.at(-1)) return;
    this.#catchingUp = false;
    // A resumed poll's catch-up is news to the followers: it takes the next places in the sequence.
    for (const caughtUp of this.#stand.catchUp()) this.#emit(caughtUp);
  }

  /** The poll errored, or completed (`error` undefined): the followers' stream ends as it did. */
  pollEnded(failed: { readonly error: unknown } | undefined): void {
    // Forgotten first: a follower coming after the error starts a new poll.
    this.#ended = failed ?? 'completed';
    this.#forget(failed === undefined && this.#stand.finished !== undefined);
    this.#end(failed);
  }

  /** The followers' stream ends: completed, or with the error `failed` carries. */
  #end(failed: { readonly error: unknown } | undefined): void {
    const following = this.#following;
    this.#following = [];
    for (const follower of following) {
      if (failed === undefined) follower.complete();
      else follower.error(failed.error);
    }
  }
}

/** A followed execution's poll, heard by it: one small object per poll rather than three closures. */
class PollFeed implements Observer<RunEvent> {
  readonly #followed: FollowedRun;

  constructor(followed: FollowedRun) {
    this.#followed = followed;
  }

  next(event: RunEvent): void {
    this.#followed.polled(event);
  }

  error(error: unknown): void {
    this.#followed.pollEnded({ error });
  }

  complete(): void {
    this.#followed.pollEnded(undefined);
  }
}

// --- how a run stands, and one run shared --------------------------------------------------------
/**
 * How a run stands, for a newcomer: the state of its last reading (a run of this client carries it
 * with its events) — or, for any other event stream, its events folded — and its result once it came.
 */
export class RunStand {
  #reading: { readonly seq: number; readonly state: RunState } | undefined;
  // Only for events that carry no reading: a run of this client is never folded twice.
  #fold: RunStateFold | undefined;
  #result: FinishedEvent | undefined;
  #seen = false;

  /** Takes in one event of the run. */
  see(event: RunEvent): void {
    this.#seen = true;
    if (event.type === 'finished') this.#result = event;
    const reading = readingOf(event);
    if (reading !== undefined) {
      // A reading is complete with its last event.
      // Its place and state only: the reading's events are the past a newcomer never gets.
      if (event === reading.events.at(-1)) this.#reading = { seq: reading.seq, state: reading.state };
      this.#fold = undefined;
      return;
    }
    this.#fold ??= this.#reading === undefined ? new RunStateFold() : foldFrom(this.#reading.state);
    this.#fold.apply(event);
  }

  /** The execution's id, once known. */
  get executionId(): string | undefined {
    return this.#state()?.executionId;
  }

  /** The run's `finished` event, once it came. */
  get finished(): FinishedEvent | undefined {
    return this.#result;
  }

  /**
   * What brings a newcomer to how the run stands: one `snapshot` event carrying its state (for a run
   * of this client, with the reading it stands for), and `finished` again once the run has ended, so
   * that the newcomer's stream still ends with it. Nothing before the first event.
   */
  catchUp(): readonly RunEvent[] {
    const state = this.#state();
    if (state === undefined) return [];
    const snapshot: RunEvent = { type: 'snapshot', executionId: state.executionId ?? state.result?.executionId ?? '', state };
    // A copy of `finished`: the run's own event keeps its reading.
    const events = this.#result === undefined ? [snapshot] : [snapshot, { ...this.#result }];
    if (this.#fold === undefined && this.#reading !== undefined) withReading({ seq: this.#reading.seq, state, events });
    return events;
  }

  #state(): RunState | undefined {
    if (!this.#seen) return undefined;
    return this.#fold?.state ?? this.#reading?.state;
  }
}

function foldFrom(state: RunState): RunStateFold {
  const fold = new RunStateFold();
  fold.apply({ type: 'snapshot', executionId: state.executionId ?? '', state });
  return fold;
}

/**
 * Shares one run among many subscribers: the first subscription starts the execution, later ones
 * join it and first receive one `snapshot` event carrying its current state (the state after its last
 * read, as every subscriber's `toRunState()` showed it) instead of every event so far. Only when the
 * last subscriber leaves, and none came back by the end of the current task, is the source
 * unsubscribed — and so the execution aborted. Once the run has
 * completed with its result, a later subscriber gets its final state (a `snapshot`, then `finished`) and
 * completes: the workflow is never run twice by accident (so `repeat()` after `shareRun()` replays
 * the result; to run the workflow again, subscribe to the run that is not shared).
 * After an error (a failed request, or a failed workflow with `failOnWorkflowError`), or once every
 * subscriber left early, the next subscriber starts a new execution — so `retry()` re-runs.
 *
 * @example
 * ```ts
 * const run$ = client.run('c-1').pipe(shareRun());
 * run$.pipe(toRunState()).subscribe(render);
 * const result = await runResult(run$);
 * ```
 */
export function shareRun(): MonoTypeOperatorFunction<RunEvent> {
  return (source) => {
    let current: FollowedRun | undefined;
    return new Observable<RunEvent>((subscriber) => {
      const shared = (current ??= new FollowedRun((final) => {
        // Ended with its result, it is kept for later subscribers; cut short (an error, a `takeUntil`
        // before `shareRun`, every subscriber gone), the next subscriber starts anew.
        if (!final && current === shared) current = undefined;
      }));
      return shared.join(subscriber, () => source);
    });
  };
}

/**
 * Shares a run among its subscribers as `shareRun` does, but once: after its end (its result, an error,
 * or cut short, a run handle detached) a newcomer gets how it stood and how it ended, never a new run.
 */
export function shareOnce(run: Observable<RunEvent>): Observable<RunEvent> {
  const followed = new FollowedRun(() => undefined);
  return new Observable<RunEvent>((subscriber) => followed.join(subscriber, () => run));
}

// --- a watch through a hub -----------------------------------------------------------------------
/**
 * A watch through a hub: every watch of the execution in the hub (and a run of it that leads it)
 * shares one poll, started with the first one's settings (`pollInterval`, `output`,
 * `onFailedBranches`). Each watch keeps its own ending: `failOnWorkflowError` errors after a failed
 * `finished`, and `abortOnUnsubscribe` aborts the execution when this watch leaves before `finished`
 * only if nothing else in the hub follows it then. A watch with its own `timeoutMs`, `signal` or
 * `detach` ends on terms no other shares, and one without a hub has none to share: it polls on its own.
 */
export function sharedWatch(source: ExecutionSource, hub: RunHub | undefined, executionId: string, settings: RunSettings, canvasId?: string): Observable<RunEvent> {
  const target = { kind: 'watch', executionId, canvasId } as const;
  if (hub === undefined || settings.timeoutMs !== undefined || settings.signal !== undefined || settings.detach !== undefined) return runLifecycle(source, target, settings);
  const shared = hub.follow(executionId, () => runLifecycle(source, target, { ...settings, abortOnUnsubscribe: false, failOnWorkflowError: false }));
  return new Observable<RunEvent>((subscriber) => {
    const watch = new WatchOfShared(subscriber, settings.failOnWorkflowError);
    const subscription = shared.subscribe(watch);
    return () => {
      subscription.unsubscribe();
      if (settings.abortOnUnsubscribe && !watch.over && hub.followers(executionId) === 0) abortInBackground(source, executionId, settings);
    };
  });
}

/**
 * One watch of the shared stream, passing its events on, with its own ending: an object with methods
 * rather than three closures, since every watched run holds it.
 */
class WatchOfShared implements Observer<RunEvent> {
  /** Finished, errored or completed: the execution is not this watch's to abort any more. */
  over = false;
  readonly #subscriber: Subscriber<RunEvent>;
  readonly #failOnWorkflowError: boolean;

  constructor(subscriber: Subscriber<RunEvent>, failOnWorkflowError: boolean) {
    this.#subscriber = subscriber;
    this.#failOnWorkflowError = failOnWorkflowError;
  }

  next(event: RunEvent): void {
    if (event.type === 'finished') this.over = true;
    this.#subscriber.next(event);
    if (event.type === 'finished' && this.#failOnWorkflowError && event.result.endedBy === 'failed') this.#subscriber.error(new WorkflowFailedError(event.result));
  }

  error(error: unknown): void {
    this.over = true;
    this.#subscriber.error(error);
  }

  complete(): void {
    this.over = true;
    this.#subscriber.complete();
  }
}
