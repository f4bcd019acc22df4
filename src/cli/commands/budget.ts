import { Command } from 'commander';
import { createLogUpdate } from 'log-update';
import { exhaustMap, firstValueFrom, from, identity, ignoreElements, merge, Observable, take, takeUntil, tap, timer } from 'rxjs';
import { budgetFrame } from '../budget/budget-frame.js';
import { type BudgetView, viewOfRecord, viewOfService } from '../budget/budget-view.js';
import { openRedisAccount } from '../budget/redis-account.js';
import { connect, errorSubject } from '../connect.js';
import type { CliContext } from '../context.js';
import type { CommandOutcome } from '../exit-code.js';
import { createPaint } from '../format/paint.js';
import { positiveSeconds, wholeNumber } from '../numbers.js';
import { outcomeAbout } from '../outcome.js';
import { UsageError } from '../usage-error.js';

interface BudgetFlags {
  readonly url?: string;
  readonly redis?: string;
  readonly account?: string;
  readonly interval?: number;
  readonly count?: number;
  readonly json: boolean;
}

/** A fleet's record costs no request: redrawn often. */
const REDIS_INTERVAL_S = 2;
/** Each refresh against the service costs one request of the account's: 2 a minute by default. */
const SERVICE_INTERVAL_S = 30;
const DEFAULT_COLUMNS = 80;

const HELP = `
Sources:
  the service   one cheap request per refresh (a search of one workflow); its rate-limit headers
                give the minute and the day of the whole account (every process and key). Each
                refresh costs one request of the account: every ${SERVICE_INTERVAL_S} s by default.
  --redis URL --account NAME
                the budget a fleet shares through flowstream/redis: the minute and the day as its
                processes count them, the reads waiting, the runs polling, the runs its Redis run
                hubs follow by state, and each live process with its lease. Reads only: it sends
                nothing and does not join the fleet.

On a terminal the view is redrawn in place (q or Ctrl-C quits, exit 0); piped, or with --json, it
prints one JSON object per refresh (README "flowstream budget" describes its fields).

Examples:
  $ flowstream budget
  $ flowstream budget --redis redis://127.0.0.1:6379 --account acme-prod
  $ flowstream budget --redis redis://127.0.0.1:6379 --account acme-prod --count 1 | jq .minute`;

/** Where the views come from: one read per refresh. */
interface ViewSource {
  read(): Promise<BudgetView>;
  close(): Promise<void>;
}

async function openSource(flags: BudgetFlags, context: CliContext): Promise<ViewSource> {
  if (flags.redis !== undefined || flags.account !== undefined) {
    if (flags.redis === undefined || flags.account === undefined) throw new UsageError('--redis and --account go together: the Redis URL of the fleet and the account\'s name in it.');
    const account = flags.account;
    const reader = await openRedisAccount(flags.redis, account);
    return {
      read: async () => {
        const { record, now, runs } = await reader.read();
        return viewOfRecord(record, now, account, runs);
      },
      close: () => reader.close(),
    };
  }
  // The key only from the environment: a key on the command line stays in the shell's history.
  const missing = [
    ...((context.env['FLOWSTREAM_API_KEY']?.trim() ?? '') === '' ? ['No API key: set FLOWSTREAM_API_KEY (budget reads the key only from the environment).'] : []),
    ...((flags.url ?? context.env['FLOWSTREAM_BASE_URL'] ?? '').trim() === '' ? ['No API address: pass --url <url> or set FLOWSTREAM_BASE_URL (it ends in /v1).'] : []),
  ];
  if (missing.length > 0) throw new UsageError([...missing, 'For a fleet sharing a budget in Redis: --redis <url> --account <name>.'].join('\n'));
  const client = connect({ baseUrl: flags.url }, context);
  const { budget } = client;
  if (budget === undefined) throw new Error('the client has no budget');
  return {
    read: async () => {
      // service.md §2.1: every answer past auth carries the account's X-RateLimit-*-RPM/-Daily counts.
      await client.workflows.search({ pageSize: 1 });
      return viewOfService(budget.snapshot());
    },
    close: () => Promise.resolve(),
  };
}

/** Emits when the user quits: Ctrl-C (SIGINT, or the byte a raw terminal sends) or `q` on a terminal. */
function quits(context: CliContext, keys: boolean): Observable<void> {
  return new Observable<void>((subscriber) => {
    const stopInterrupt = context.interrupts(() => {
      subscriber.next();
    });
    const { stdin } = context;
    if (!keys || stdin?.isTTY !== true) return stopInterrupt;
    const onKey = (data: Buffer): void => {
      const key = data.toString('utf8');
      if (key === 'q' || key === 'Q' || key.includes('\u0003')) subscriber.next();
    };
    stdin.setRawMode(true);
    stdin.on('data', onKey);
    stdin.resume();
    return () => {
      stopInterrupt();
      stdin.off('data', onKey);
      stdin.setRawMode(false);
      stdin.pause();
    };
  });
}

/** Errors of a write whose reader is gone: a closed pipe (`| head -1`), a closed terminal. */
const GONE_OUTPUT: ReadonlySet<string> = new Set(['EPIPE', 'EIO']);

/**
 * Emits once nobody reads the output any more. The command's entry point keeps the process going when
 * its output is gone (a run must still send its abort); a display that only reads has nothing left to do,
 * and each refresh against the service would spend a request of the account for nobody.
 */
function outputGone(stdout: NodeJS.WriteStream): Observable<void> {
  return new Observable<void>((subscriber) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      if (error.code !== undefined && GONE_OUTPUT.has(error.code)) subscriber.next();
    };
    stdout.on('error', onError);
    return () => stdout.off('error', onError);
  });
}

async function budget(flags: BudgetFlags, context: CliContext): Promise<CommandOutcome> {
  const { stdout } = context;
  const live = !flags.json && stdout.isTTY;
  const source = await openSource(flags, context);
  const intervalMs = (flags.interval ?? (flags.redis === undefined ? SERVICE_INTERVAL_S : REDIS_INTERVAL_S)) * 1_000;
  const update = live ? createLogUpdate(stdout) : undefined;
  const paint = createPaint(live && stdout.hasColors());
  const show = (view: BudgetView): void => {
    if (update === undefined) stdout.write(`${JSON.stringify(view)}\n`);
    else update(budgetFrame(view, paint, stdout.columns > 0 ? stdout.columns : DEFAULT_COLUMNS));
  };
  const refreshes = timer(0, intervalMs).pipe(
    // A slow read is not stacked: the next refresh waits for it.
    exhaustMap(() => from(source.read())),
    tap(show),
    flags.count === undefined ? identity : take(flags.count),
    ignoreElements(),
  );
  try {
    // Until the count is reached, the user quits or the reader left: all end well (exit 0); a failed read ends the command.
    await firstValueFrom(refreshes.pipe(takeUntil(merge(quits(context, live), outputGone(stdout)))), { defaultValue: undefined });
    return { kind: 'done' };
  } finally {
    // log-update shows the cursor again and leaves the last frame on the screen.
    update?.done();
    await source.close();
  }
}

/** `flowstream budget`: the account's request budget, live. */
export function budgetCommand(context: CliContext, report: (outcome: CommandOutcome) => void): Command {
  return new Command('budget')
    .description('show the account\'s request budget live: the minute and the day, what waits, runs and the processes of a fleet')
    .option('--url <url>', 'API base URL ending in /v1 (default: $FLOWSTREAM_BASE_URL); the key is read from $FLOWSTREAM_API_KEY')
    .option('--redis <url>', 'read the budget a fleet shares in Redis (redis://, rediss:// or redis+unix:///path)')
    .option('--account <name>', 'the account\'s name in Redis, as the fleet gives it to createRedisBudget')
    .option('--interval <seconds>', `seconds between refreshes (default: ${REDIS_INTERVAL_S} with --redis, ${SERVICE_INTERVAL_S} against the service)`, positiveSeconds)
    .option('--count <n>', 'stop after this many refreshes', wholeNumber(1))
    .option('--json', 'one JSON object per refresh, also on a terminal (the default when piped)', false)
    .addHelpText('after', HELP)
    .action(async (flags: BudgetFlags) => {
      report(await outcomeAbout(errorSubject({ baseUrl: flags.url }, context), () => budget(flags, context)));
    });
}
