import { Command } from 'commander';
import { connect, errorSubject, withConnectionOptions } from '../connect.js';
import type { CliContext } from '../context.js';
import type { CommandOutcome } from '../exit-code.js';
import { outcomeAbout, outcomeOfRun } from '../outcome.js';
import { createRenderer } from '../progress/create-renderer.js';
import { followRun } from '../progress/follow-run.js';

interface WatchFlags {
  readonly json: boolean;
  readonly quiet: boolean;
  readonly apiKey?: string;
  readonly baseUrl?: string;
}

async function watch(executionId: string, flags: WatchFlags, context: CliContext): Promise<CommandOutcome> {
  const client = connect(flags, context);
  // Watching never aborts: Ctrl-C only stops following (service.md §3.8: anyone may watch any execution).
  const run$ = client.watch(executionId, { failOnWorkflowError: false, abortOnUnsubscribe: false });
  // At attach, one status and one output read: when the execution was created (service.md §4.1) and
  // which nodes are work with their start times (§4.2), so that the display shows the execution's age
  // and its nodes' times rather than counting from the moment we attached. A failure here is the
  // watch's to report, with the same error, so it is not read twice.
  const [snapshot, output] = flags.json ? [] : await Promise.all([client.executions.status(executionId), client.executions.output(executionId)]);
  const renderer = createRenderer(context.stdout, {
    json: flags.json,
    quiet: flags.quiet,
    known: output?.output ?? [],
    ...(snapshot?.createdAt === undefined ? {} : { createdAt: snapshot.createdAt }),
  });
  return outcomeOfRun(await followRun(run$, { renderer, onInterrupt: 'detach', interrupts: context.interrupts, notices: context.stderr }));
}

/** `flowstream watch <executionId>`: follows an execution started elsewhere, until it ends. */
export function watchCommand(context: CliContext, report: (outcome: CommandOutcome) => void): Command {
  return withConnectionOptions(new Command('watch'))
    .description('follow an execution that is already running (Ctrl-C stops watching; it does not abort: `flowstream abort <executionId>` does)')
    .argument('<executionId>', 'the execution to follow (we-…)')
    .option('--json', 'print every event as one line of JSON (NDJSON)', false)
    .option('-q, --quiet', 'leave out partial output', false)
    .addHelpText('after', '\nCtrl-C, SIGTERM and SIGHUP stop watching and leave the execution running;\nto stop it: flowstream abort <executionId>.\nExit codes: 0 finished, 1 workflow failed, 2 usage error, 3 API or connection error, 130 Ctrl-C (143 SIGTERM, 129 SIGHUP).')
    .action(async (executionId: string, flags: WatchFlags) => {
      report(await outcomeAbout(errorSubject(flags, context, { executionId }), () => watch(executionId, flags, context)));
    });
}
