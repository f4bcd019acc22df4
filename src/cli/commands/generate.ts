import { Command, Option } from 'commander';
import { COPILOT_LOCALES, type CopilotLocale } from '../../index.js';
import { connect, errorSubject, withConnectionOptions } from '../connect.js';
import type { CliContext } from '../context.js';
import type { CommandOutcome } from '../exit-code.js';
import { outcomeAbout } from '../outcome.js';
import { createPaint } from '../format/paint.js';
import { planLines } from '../format/plan.js';
import { terminalSafe, terminalText } from '../format/terminal-text.js';
import { UsageError } from '../usage-error.js';

interface GenerateFlags {
  readonly locale?: CopilotLocale;
  readonly replace?: string;
  readonly json: boolean;
  readonly apiKey?: string;
  readonly baseUrl?: string;
}

async function generate(prompt: string, flags: GenerateFlags, context: CliContext): Promise<CommandOutcome> {
  const client = connect(flags, context);
  // Nothing to generate from: said at once, not after promising a wait.
  if (prompt.trim() === '') throw new UsageError('the prompt must say what the workflow should do; it is empty.');
  // Generation can block for up to 300 s on the service (service.md §2.4); say so instead of looking stuck.
  if (!flags.json) context.stderr.write('Generating the workflow (this can take a few minutes)…\n');
  const generated = await client.copilot.generate({
    query: prompt,
    ...(flags.locale === undefined ? {} : { locale: flags.locale }),
    ...(flags.replace === undefined ? {} : { canvasId: flags.replace }),
  });
  const text = flags.json ? JSON.stringify(generated) : planLines(terminalText(generated.canvasId), terminalSafe(generated.workflowPlan), createPaint(context.stdout.isTTY && context.stdout.hasColors())).join('\n');
  context.stdout.write(`${text}\n`);
  return { kind: 'done' };
}

/** `flowstream generate "<prompt>"`: has the copilot build a workflow from words. */
export function generateCommand(context: CliContext, report: (outcome: CommandOutcome) => void): Command {
  return withConnectionOptions(new Command('generate'))
    .description('build a workflow from a description, with the copilot')
    .argument('<prompt>', 'what the workflow should do, in words')
    .addOption(new Option('--locale <locale>', `language of the generated titles (documented: ${COPILOT_LOCALES.join(', ')}; others are passed on with a warning)`))
    .option('--replace <canvasId>', "replace this workflow's tasks and variables instead of creating one (irreversible)")
    .option('--json', 'the generated workflow as JSON', false)
    .action(async (prompt: string, flags: GenerateFlags) => {
      report(await outcomeAbout(errorSubject(flags, context, flags.replace === undefined ? {} : { canvasId: flags.replace }), () => generate(prompt, flags, context)));
    });
}
