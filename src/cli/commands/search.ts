import { Command, Option } from 'commander';
import { WORKFLOW_ORDERS, type WorkflowOrder, type WorkflowSummary } from '../../index.js';
import { connect, errorSubject, withConnectionOptions } from '../connect.js';
import type { CliContext } from '../context.js';
import type { CommandOutcome } from '../exit-code.js';
import { outcomeAbout } from '../outcome.js';
import { wholeNumber } from '../numbers.js';
import { terminalText } from '../format/terminal-text.js';

interface SearchFlags {
  readonly order?: WorkflowOrder;
  readonly limit: number;
  readonly json: boolean;
  readonly apiKey?: string;
  readonly baseUrl?: string;
}

async function search(keyword: string | undefined, flags: SearchFlags, context: CliContext): Promise<CommandOutcome> {
  const client = connect(flags, context);
  const found: WorkflowSummary[] = [];
  // `list` follows the pages; pages no larger than the limit (100 at most, service.md §5.1), and no read
  // past the item that reaches it, so no page is fetched only to be thrown away.
  const query = { ...(keyword === undefined ? {} : { keyword }), ...(flags.order === undefined ? {} : { order: flags.order }), pageSize: Math.min(flags.limit, 100) };
  for await (const workflow of client.workflows.list(query)) {
    found.push(workflow);
    if (found.length >= flags.limit) break;
  }
  if (flags.json) {
    for (const workflow of found) context.stdout.write(`${JSON.stringify(workflow)}\n`);
  } else if (found.length === 0) {
    context.stdout.write(keyword === undefined ? 'No workflows.\n' : `No workflow title contains "${keyword}".\n`);
  } else {
    const width = Math.max(...found.map((workflow) => workflow.canvasId.length));
    for (const workflow of found) context.stdout.write(`${terminalText(workflow.canvasId).padEnd(width)}  ${terminalText(workflow.title)}\n`);
  }
  return { kind: 'done' };
}

/** `flowstream search [keyword]`: workflows whose title contains the keyword. */
export function searchCommand(context: CliContext, report: (outcome: CommandOutcome) => void): Command {
  return withConnectionOptions(new Command('search'))
    .description('list workflows, optionally those whose title contains a keyword')
    .argument('[keyword]', 'a part of the title (case-insensitive)')
    .addOption(new Option('--order <order>', 'sort order').choices(WORKFLOW_ORDERS))
    .option('--limit <n>', 'show at most n workflows', wholeNumber(1), 20)
    .option('--json', 'one JSON object per line', false)
    .action(async (keyword: string | undefined, flags: SearchFlags) => {
      report(await outcomeAbout(errorSubject(flags, context), () => search(keyword, flags, context)));
    });
}
