import { interval, type SchedulerLike, type Subscription } from 'rxjs';
import { errorBody } from './error-body.js';
import type { FollowedExecution } from './followed-execution.js';
import { errorFrame, eventFrame, HEARTBEAT_FRAME, retryFrame } from './sse-frames.js';

/** The timing of a viewer's stream. */
export interface StreamTiming {
  readonly scheduler: SchedulerLike;
  readonly heartbeatMs: number;
  readonly retryMs: number;
}

/**
 * One viewer's `text/event-stream` of `follow`: the reconnection delay, the events after `afterSeq`,
 * then each new one, heartbeat comments while it is quiet, and the end after `finished` (or an `error`
 * event when the follow failed). Cancelling the stream (the viewer left) takes the viewer away and
 * stops its heartbeat; the follow goes on.
 */
export function eventStream(follow: FollowedExecution, afterSeq: number, timing: StreamTiming): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let detach: () => void = () => undefined;
  let heartbeat: Subscription | undefined;
  const stop = (): void => {
    detach();
    heartbeat?.unsubscribe();
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true;
      const send = (text: string): void => {
        if (open) controller.enqueue(encoder.encode(text));
      };
      const close = (): void => {
        if (!open) return;
        open = false;
        stop();
        controller.close();
      };
      send(retryFrame(timing.retryMs));
      heartbeat = interval(timing.heartbeatMs, timing.scheduler).subscribe(() => {
        send(HEARTBEAT_FRAME);
      });
      detach = follow.attach(
        {
          event: (entry) => {
            send(eventFrame(entry.seq, entry.event));
          },
          end: (end) => {
            if (end.kind === 'error') {
              const { error, message } = errorBody(end.error);
              send(errorFrame(error, message));
            }
            close();
          },
        },
        afterSeq,
      );
    },
    cancel() {
      stop();
    },
  });
}
