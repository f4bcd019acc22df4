import { Command } from 'commander';
import { DEFAULT_IDEMPOTENCY_TTL_MS, idempotencyKey } from '../../runs/idempotency.js';
import { terminalText } from '../format/terminal-text.js';
import { collectAssignment, type Assignment } from '../assignments.js';
import { connect, errorSubject, withConnectionOptions } from '../connect.js';
import { resolveConnection } from '../connection.js';
import type { CliContext } from '../context.js';
import type { CommandOutcome } from '../exit-code.js';
import { answeringPrepared, createFileIdempotencyStore, type HeldKey, idempotencyKeysDirectory, type PreparedStore } from '../idempotency-keys.js';
import { positiveSeconds } from '../numbers.js';
import { outcomeAbout, outcomeOfRun } from '../outcome.js';
import { createRenderer } from '../progress/create-renderer.js';
import { followRun } from '../progress/follow-run.js';
import type { RunRenderer } from '../progress/renderer.js';
import { UsageError } from '../usage-error.js';
import { runVariables, uploadFileVariables } from '../variables.js';

interface RunFlags {
  readonly var: readonly Assignment[];
  readonly file: readonly Assignment[];
  readonly json: boolean;
  readonly abort: boolean;
  readonly timeout?: number;
  readonly idempotencyKey?: string;
  readonly idempotencyTtl?: number;
  readonly quiet: boolean;
  readonly check: boolean;
  readonly apiKey?: string;
  readonly baseUrl?: string;
}

const EXAMPLES = `
Examples:
  $ flowstream run c-sample-parallel
  $ flowstream run c-sample-variables --var topic=rxjs --var tone=casual --file attachment=./notes.md
  $ flowstream run c-sample-linear --json | jq -c 'select(.type == "node")'
  $ flowstream run c-nightly-report --idempotency-key "report-$(date +%F)"   # a retried CI job starts it once

Ctrl-C aborts the execution (exit 130); so do SIGTERM (exit 143: kill, timeout, a cancelled CI job)
and SIGHUP (exit 129: a closed terminal). The command waits for the abort's answer before it exits;
a second signal quits at once. With --no-abort the execution keeps running and its id is printed;
\`flowstream abort <id>\` stops it later.
With --idempotency-key, a run given a key already used (on this machine, for --idempotency-ttl
seconds, default a day) follows the execution that key started instead of starting another; the keys
are kept in $FLOWSTREAM_STATE_DIR (default $XDG_STATE_HOME/flowstream or ~/.local/state/flowstream).
Exit codes: 0 finished, 1 workflow failed or timed out, 2 usage error, 3 API or connection error,
4 the execution could not be aborted (it may still be running), 5 a start with the
--idempotency-key may have reached the service but its answer was lost (nothing started again).`;

/**
 * The store of a run given `--idempotency-key`, its key claimed before the uploads of `--file`: a key
 * that holds an execution to follow, or a start in doubt, starts nothing, and its run needs no files; a
 * free key is taken at once, so that of two runs given it at the same time one uploads and starts and
 * the other waits and follows. The run's claim then answers what was found (see `answeringPrepared`).
 */
async function keyedRun(key: string, flags: RunFlags, context: CliContext): Promise<{ readonly store: PreparedStore; readonly held?: HeldKey }> {
  const store = createFileIdempotencyStore({ directory: idempotencyKeysDirectory(context.env), baseUrl: resolveConnection(flags, context.env).baseUrl });
  const prepared = await store.prepare(key, flags.idempotencyTtl === undefined ? DEFAULT_IDEMPOTENCY_TTL_MS : flags.idempotencyTtl * 1000);
  return { store: answeringPrepared(store, key, prepared), ...(prepared.kind === 'start' ? {} : { held: prepared }) };
}

/** The command's first line: the run it starts, or the execution its key started earlier, which it follows. */
function runHeading(canvasId: string, key: string | undefined, held: HeldKey | undefined): string {
  if (key === undefined || held?.kind !== 'follow') return `Starting a run of ${canvasId}`;
  return `Following execution ${held.executionId} of ${canvasId}, started earlier with --idempotency-key ${terminalText(key)}`;
}

async function run(canvasId: string, flags: RunFlags, context: CliContext): Promise<CommandOutcome> {
  if (flags.idempotencyTtl !== undefined && flags.idempotencyKey === undefined) throw new UsageError('--idempotency-ttl needs --idempotency-key.');
  const keyed = flags.idempotencyKey === undefined ? undefined : await keyedRun(idempotencyKey(flags.idempotencyKey), flags, context);
  try {
    return await startAndFollow(canvasId, flags, context, keyed);
  } finally {
    // A key taken for a start that never went (an upload or the variables' check failed) is free again.
    await keyed?.store.unclaimed();
  }
}

async function startAndFollow(canvasId: string, flags: RunFlags, context: CliContext, keyed: { readonly store: PreparedStore; readonly held?: HeldKey } | undefined): Promise<CommandOutcome> {
  const client = connect(flags, context, keyed === undefined ? {} : { idempotency: keyed.store });
  const files = keyed?.held === undefined ? await uploadFileVariables(client, flags.file, (line) => context.stderr.write(`${line}\n`)) : {};
  const variables = runVariables(flags.var, files);
  const run$ = client.run(canvasId, { variables }, {
    failOnWorkflowError: false,
    abortOnUnsubscribe: flags.abort,
    // A wrong run still costs credits: the variables are checked against the plan before it starts.
    checkVariables: flags.check,
    ...(flags.timeout === undefined ? {} : { timeoutMs: flags.timeout * 1000 }),
    ...(flags.idempotencyKey === undefined ? {} : { idempotencyKey: flags.idempotencyKey }),
    ...(flags.idempotencyTtl === undefined ? {} : { idempotencyTtlMs: flags.idempotencyTtl * 1000 }),
  });
  // followRun listens for Ctrl-C before anything is said; the live display is made after the line
  // below, whose first frame would otherwise leave that line stale on the screen.
  // No event can come before it exists: the start answers asynchronously.
  const display: { current?: RunRenderer } = {};
  const renderer: RunRenderer = {
    event: (event) => {
      display.current?.event(event);
    },
    close: (result) => {
      display.current?.close(result);
    },
  };
  const ending = followRun(run$, { renderer, onInterrupt: flags.abort ? 'abort' : 'detach', interrupts: context.interrupts, notices: context.stderr });
  if (!flags.json) context.stdout.write(`${runHeading(canvasId, flags.idempotencyKey, keyed?.held)}\n`);
  display.current = createRenderer(context.stdout, { json: flags.json, quiet: flags.quiet });
  const ended = await ending;
  // The abort goes on in the background after the command returns; the process waits for its answer.
  if (ended.kind === 'interrupted' && !ended.detached) context.aborts?.ask(ended.executionId);
  return outcomeOfRun(ended);
}

/** `flowstream run <canvasId>`: starts a run and follows it live. */
export function runCommand(context: CliContext, report: (outcome: CommandOutcome) => void): Command {
  return withConnectionOptions(new Command('run'))
    .description('start a run of a workflow and follow its progress live')
    .argument('<canvasId>', 'the workflow to run (see `flowstream search`)')
    .option('--var <name=value>', 'set a variable; repeat for more (a name given twice becomes a list)', collectAssignment('--var'), [])
    .option('--file <name=path>', 'upload a file and pass its key as the variable name; repeatable', collectAssignment('--file', 'name=path'), [])
    .option('--json', 'print every event as one line of JSON (NDJSON), for scripts', false)
    .option('--no-abort', 'on Ctrl-C, SIGTERM or SIGHUP, leave the execution running and print its id to `watch` later')
    .option('--timeout <seconds>', 'abort the execution and fail after this many seconds', positiveSeconds)
    .option('--idempotency-key <key>', 'start once per key: run again with the same key, it follows the execution the key started')
    .option('--idempotency-ttl <seconds>', 'how long a key holds from its first start (default a day)', positiveSeconds)
    .option('-q, --quiet', 'leave out partial output: progress and the summary only', false)
    .option('--no-check', 'start without checking the variables against the workflow\'s plan')
    .addHelpText('after', EXAMPLES)
    .action(async (canvasId: string, flags: RunFlags) => {
      report(await outcomeAbout(errorSubject(flags, context, { canvasId }), () => run(canvasId, flags, context)));
    });
}
