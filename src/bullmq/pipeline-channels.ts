import type { Redis } from 'ioredis';

/** Listening on one channel: `subscribed` resolves once Redis holds the subscription, from when no message passes by. */
export interface ChannelListening {
  readonly subscribed: Promise<void>;
  stop(): void;
}

/** The pub/sub channels a queue object listens on, all on one connection of its own. */
export interface PipelineChannels {
  listen(channel: string, listener: (message: string) => void): ChannelListening;
  close(): void;
}

/**
 * One subscriber connection (a duplicate of `redis`, opened on the first listener) for every
 * pipeline a process follows, each channel subscribed once while anyone listens on it: a UI
 * following a thousand pipelines holds one connection, not a thousand. ioredis subscribes again
 * by itself after a reconnection.
 */
export function pipelineChannels(redis: Redis): PipelineChannels {
  let subscriber: Redis | undefined;
  const listeners = new Map<string, { readonly subscribed: Promise<void>; readonly each: Set<(message: string) => void> }>();
  const connection = (): Redis => {
    if (subscriber !== undefined) return subscriber;
    const opened = redis.duplicate();
    // Its connection reconnects by itself; the listeners' messages come again once it is back.
    opened.on('error', () => undefined);
    opened.on('message', (channel: string, message: string) => {
      for (const listener of [...(listeners.get(channel)?.each ?? [])]) listener(message);
    });
    subscriber = opened;
    return opened;
  };
  return {
    listen: (channel, listener) => {
      let found = listeners.get(channel);
      if (found === undefined) {
        found = { subscribed: connection().subscribe(channel).then(() => undefined), each: new Set() };
        listeners.set(channel, found);
      }
      const own = found;
      own.each.add(listener);
      return {
        subscribed: own.subscribed,
        stop: () => {
          own.each.delete(listener);
          if (own.each.size > 0 || listeners.get(channel) !== own) return;
          listeners.delete(channel);
          // Commands on one connection run in order: a later subscription to this channel still holds.
          subscriber?.unsubscribe(channel).catch(() => undefined);
        },
      };
    },
    close: () => {
      listeners.clear();
      subscriber?.disconnect();
      subscriber = undefined;
    },
  };
}
