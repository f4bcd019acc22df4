import type { Logger } from '../domain/model.js';

type Level = 'debug' | 'warn' | 'error';

/**
 * The user's logger, made unable to break what it reports on: a logger that throws (a full disk, a
 * closed stream, a bug) would otherwise end the run or call that merely wanted to warn. What it throws
 * is dropped: there is nowhere left to report it. Wrapped once, where the client's options are read.
 */
export function safeLogger(logger: Logger | undefined): Logger | undefined {
  if (logger === undefined) return undefined;
  const call = (level: Level, message: string, meta?: Readonly<Record<string, unknown>>): void => {
    try {
      if (meta === undefined) logger[level]?.(message);
      else logger[level]?.(message, meta);
    } catch {
      // The logger failed; the work it was told about goes on.
    }
  };
  return {
    warn: (message, meta) => { call('warn', message, meta); },
    ...(logger.debug === undefined ? {} : { debug: (message, meta) => { call('debug', message, meta); } }),
    ...(logger.error === undefined ? {} : { error: (message, meta) => { call('error', message, meta); } }),
  };
}
