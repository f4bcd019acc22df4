import { interval, type SchedulerLike, type Subscription } from 'rxjs';
import { isFlowstreamError } from '../errors/flowstream-error.js';
import { errorBody } from './error-body.js';
import type { FollowedExecution } from './followed-execution.js';
import { errorFrame, eventFrame, HEARTBEAT_FRAME, retryFrame, snapshotFrame } from './sse-frames.js';

/** Where a viewer resumes: after `afterSeq` (0 from the start) of the follow named `followId`, when it says. */
export interface ResumePoint {
  readonly afterSeq: number;
  readonly followId: string | undefined;
}

/** The timing of a viewer's stream, and when a viewer from the start gets a snapshot. */
export interface StreamSettings {
  readonly scheduler: SchedulerLike;
  readonly heartbeatMs: number;
  readonly retryMs: number;
  /** A viewer from the start of a history longer than this many events gets one `snapshot` standing for them. */
  readonly snapshotAfter: number;
}

/**
 * Bytes a stream holds ready for a viewer: it reads on from the follow's events only as the viewer
 * takes them, so a stalled viewer holds its place in the events and this much, not the run's output.
 */
const READY_BYTES = 16_384;

/**
 * One viewer's `text/event-stream` of `follow`: the reconnection delay, the events after its resume
 * point, then each new one, heartbeat comments while it is quiet, and the end after `finished` (or an
 * `error` event when the follow failed). A viewer from the start of a long history, or one whose point
 * is from another numbering, gets one `snapshot` of the state so far instead of the events before it.
 * The stream is one of the follow's users (`FollowedExecution.use`) until it ends or is cancelled (the
 * viewer left): then its heartbeat stops; the follow goes on.
 */
export function eventStream(follow: FollowedExecution, resume: ResumePoint, timing: StreamSettings): ReadableStream<Uint8Array> {
  // A number from another follow means nothing here: that viewer is brought to the state instead.
  const sameNumbering = resume.followId !== undefined && resume.followId === follow.followId;
  const afterSeq = resume.followId === undefined || sameNumbering ? resume.afterSeq : Number.POSITIVE_INFINITY;
  const encoder = new TextEncoder();
  let place = afterSeq;
  let left = false;
  let heartbeat: Subscription | undefined;
  let release: (() => void) | undefined;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        release = follow.use();
        controller.enqueue(encoder.encode(retryFrame(timing.retryMs)));
        // An id past the last event is from another numbering (a relay restarted, or one that had forgotten
        // the execution, for a viewer that did not say which follow its id is from): so is it. A viewer
        // that named this numbering is ahead of it (it read another process of a Redis hub, further on):
        // it waits for the events after its id, which it has not had.
        const lastSeq = follow.lastSeq;
        if ((afterSeq === 0 && lastSeq > timing.snapshotAfter) || (afterSeq > lastSeq && lastSeq > 0 && !sameNumbering) || !follow.holds(afterSeq)) {
          const { seq, state } = follow.snapshot();
          controller.enqueue(encoder.encode(snapshotFrame(seq, state)));
          place = seq;
        }
        heartbeat = interval(timing.heartbeatMs, timing.scheduler).subscribe(() => {
          // Only on a quiet stream: one the viewer has not read yet needs no keeping alive.
          if ((controller.desiredSize ?? 0) >= READY_BYTES) controller.enqueue(encoder.encode(HEARTBEAT_FRAME));
        });
      },
      async pull(controller) {
        for (;;) {
          if (!follow.holds(place)) {
            // A viewer that fell behind what the follow keeps (a long, fast history read slowly) is brought
            // to the state by a snapshot, then goes on from there: nothing it missed is left out.
            const { seq, state } = follow.snapshot();
            controller.enqueue(encoder.encode(snapshotFrame(seq, state)));
            place = seq;
          }
          const entries = follow.after(place);
          if (entries.length > 0) {
            for (const entry of entries) {
              controller.enqueue(encoder.encode(eventFrame(entry.seq, entry.event)));
              place = entry.seq;
              if ((controller.desiredSize ?? 0) <= 0) break;
            }
            return;
          }
          const end = follow.end;
          if (end !== undefined) {
            // A hub closing (its process shutting down) is no failure of the run: the stream just ends, and
            // the viewer reconnects — to another process, which follows on.
            if (end.kind === 'error' && !isHubClosed(end.error)) {
              const { error, message } = errorBody(end.error);
              controller.enqueue(encoder.encode(errorFrame(error, message)));
            }
            heartbeat?.unsubscribe();
            controller.close();
            release?.();
            return;
          }
          await follow.changed();
          if (left) return;
        }
      },
      cancel() {
        left = true;
        heartbeat?.unsubscribe();
        release?.();
      },
    },
    { highWaterMark: READY_BYTES, size: (chunk) => chunk.byteLength },
  );
}

/** The hub the follow went through was closed (`RedisRunHub.close()`), not the run's own failure. */
function isHubClosed(error: unknown): boolean {
  return isFlowstreamError(error) && error.code === 'HUB_CLOSED';
}
