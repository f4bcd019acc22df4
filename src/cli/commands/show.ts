import { Command } from 'commander';
import { connect, errorSubject, withConnectionOptions } from '../connect.js';
import type { CliContext } from '../context.js';
import type { CommandOutcome } from '../exit-code.js';
import { outcomeAbout } from '../outcome.js';
import { createPaint } from '../format/paint.js';
import { planLines } from '../format/plan.js';
import { terminalSafe } from '../format/terminal-text.js';

interface ShowFlags {
  readonly json: boolean;
  readonly apiKey?: string;
  readonly baseUrl?: string;
}

async function show(canvasId: string, flags: ShowFlags, context: CliContext): Promise<CommandOutcome> {
  const plan = await connect(flags, context).workflows.get(canvasId);
  const text = flags.json ? JSON.stringify(plan) : planLines(canvasId, terminalSafe(plan), createPaint(context.stdout.isTTY && context.stdout.hasColors())).join('\n');
  context.stdout.write(`${text}\n`);
  return { kind: 'done' };
}

/** `flowstream show <canvasId>`: a workflow's plan — tasks, what they wait for, variables. */
export function showCommand(context: CliContext, report: (outcome: CommandOutcome) => void): Command {
  return withConnectionOptions(new Command('show'))
    .description("show a workflow's plan: its tasks, their dependencies and its variables")
    .argument('<canvasId>', 'the workflow')
    .option('--json', 'the plan as JSON', false)
    .action(async (canvasId: string, flags: ShowFlags) => {
      report(await outcomeAbout(errorSubject(flags, context, { canvasId }), () => show(canvasId, flags, context)));
    });
}
