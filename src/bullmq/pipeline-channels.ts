import type { Redis } from 'ioredis';
import type { Logger } from '../domain/model.js';

/** Listening on one channel: `subscribed` resolves once Redis holds the subscription, from when no message passes by. */
export interface ChannelListening {
  readonly subscribed: Promise<void>;
  stop(): void;
}

/** The pub/sub channels a queue object listens on, all on one connection of its own. */
export interface PipelineChannels {
  /**
   * Listens on `channel`. `resubscribed` is called each time the channel is subscribed again after
   * the connection came back: messages published while it was away are lost, so a listener reads
   * again what it needs from the store.
   */
  listen(channel: string, listener: (message: string) => void, resubscribed?: () => void): ChannelListening;
  close(): void;
}

/**
 * One subscriber connection (a duplicate of `redis`, opened on the first listener) for every
 * pipeline a process follows, each channel subscribed once while anyone listens on it: a UI
 * following a thousand pipelines holds one connection, not a thousand. After a reconnection it
 * subscribes every channel again itself (not ioredis's resubscribe), then tells their listeners.
 */
export function pipelineChannels(redis: Redis, logger?: Logger): PipelineChannels {
  let subscriber: Redis | undefined;
  const listeners = new Map<string, { readonly subscribed: Promise<void>; readonly each: Set<(message: string) => void>; readonly again: Set<() => void> }>();
  const connection = (): Redis => {
    if (subscriber !== undefined) return subscriber;
    const opened = redis.duplicate({ autoResubscribe: false });
    let connected = false;
    let away = false;
    opened.on('error', (error: Error) => {
      // One line per outage: it fails once per retry until Redis is back.
      if (away) return;
      away = true;
      logger?.warn('pipeline queue: lost the connection that follows pipelines; their steps are read again once it is back', { error: error.message });
    });
    opened.on('message', (channel: string, message: string) => {
      for (const listener of [...(listeners.get(channel)?.each ?? [])]) listener(message);
    });
    opened.on('ready', () => {
      away = false;
      // The first connection subscribes what `listen` asked for; a later one subscribes it all again.
      if (!connected) {
        connected = true;
        return;
      }
      const channels = [...listeners.keys()];
      if (channels.length === 0) return;
      opened.subscribe(...channels).then(
        () => {
          for (const channel of channels) for (const again of [...(listeners.get(channel)?.again ?? [])]) again();
        },
        // Dropped again meanwhile: the next 'ready' subscribes again.
        () => undefined,
      );
    });
    subscriber = opened;
    return opened;
  };
  return {
    listen: (channel, listener, resubscribed) => {
      let found = listeners.get(channel);
      if (found === undefined) {
        found = { subscribed: connection().subscribe(channel).then(() => undefined), each: new Set(), again: new Set() };
        listeners.set(channel, found);
      }
      const own = found;
      own.each.add(listener);
      if (resubscribed !== undefined) own.again.add(resubscribed);
      return {
        subscribed: own.subscribed,
        stop: () => {
          own.each.delete(listener);
          if (resubscribed !== undefined) own.again.delete(resubscribed);
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
