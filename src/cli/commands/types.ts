import { readFile, writeFile } from 'node:fs/promises';
import { Command } from 'commander';
import type { Client } from '../../index.js';
import { connect, errorSubject, withConnectionOptions } from '../connect.js';
import type { CliContext } from '../context.js';
import type { CommandOutcome } from '../exit-code.js';
import { outcomeAbout } from '../outcome.js';
import { unifiedDiff } from '../types-diff.js';
import { type TypedWorkflow, typesModule } from '../types-module.js';
import { UsageError } from '../usage-error.js';

interface TypesFlags {
  readonly out?: string;
  readonly check: boolean;
  readonly module: string;
  readonly apiKey?: string;
  readonly baseUrl?: string;
}

/**
 * The plans to type: the given workflows, or every workflow of the account. One at a time, through the
 * client's budget. A plan that cannot be read ends it with the error, naming its workflow.
 */
async function typedWorkflows(client: Client, canvasIds: readonly string[]): Promise<TypedWorkflow[] | CommandOutcome> {
  const ids: string[] = [...canvasIds];
  if (ids.length === 0) for await (const summary of client.workflows.list({ pageSize: 100 })) ids.push(summary.canvasId);
  const workflows: TypedWorkflow[] = [];
  for (const canvasId of ids) {
    try {
      workflows.push({ canvasId, plan: await client.workflows.get(canvasId) });
    } catch (error) {
      return { kind: 'error', error, about: { canvasId } };
    }
  }
  return workflows;
}

function isMissingFile(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === 'ENOENT';
}

/** The file as it is on disk (line ends as written here, whatever a checkout made of them), or undefined when there is none. */
async function currentText(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, 'utf8')).replaceAll('\r\n', '\n');
  } catch (error) {
    if (isMissingFile(error)) return undefined;
    throw new UsageError(`cannot read --out ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function writeModule(path: string, text: string): Promise<void> {
  try {
    await writeFile(path, text, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot write --out ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function types(canvasIds: readonly string[], flags: TypesFlags, context: CliContext): Promise<CommandOutcome> {
  if (flags.check && flags.out === undefined) throw new UsageError('--check compares with the file of --out: give both.');
  if (flags.module.trim() === '') throw new UsageError('--module must name the module to augment (default: flowstream).');
  const ids = [...new Set(canvasIds)].sort();
  const typed = await typedWorkflows(connect(flags, context), ids);
  if (!Array.isArray(typed)) return typed;
  const text = typesModule(typed, { module: flags.module, canvasIds: ids });
  if (flags.out === undefined) {
    context.stdout.write(text);
    return { kind: 'done' };
  }
  if (!flags.check) {
    await writeModule(flags.out, text);
    return { kind: 'done' };
  }
  const current = await currentText(flags.out);
  if (current === text) return { kind: 'done' };
  context.stdout.write(unifiedDiff(current ?? '', text, { before: `${flags.out}${current === undefined ? ' (missing)' : ''}`, after: `${flags.out} (from the plans now)` }));
  const regenerate = ['flowstream types', ...ids, '--out', flags.out, ...(flags.module === 'flowstream' ? [] : ['--module', flags.module])].join(' ');
  context.stderr.write(`${flags.out} is out of date with the workflows' plans: run \`${regenerate}\` to regenerate it.\n`);
  return { kind: 'out-of-date' };
}

/** `flowstream types [canvasId…] --out <file> [--check]`: TypeScript types of workflows' variables, by canvas id. */
export function typesCommand(context: CliContext, report: (outcome: CommandOutcome) => void): Command {
  return withConnectionOptions(new Command('types'))
    .description("write a TypeScript module typing the variables of client.run, startRun, runEach and thenRun by canvas id, from the workflows' plans")
    .argument('[canvasId...]', 'the workflows to type (default: every workflow of the account)')
    .option('--out <file>', 'write the module to this file (default: print it)')
    .option('--check', 'write nothing: exit 0 when --out is current, 1 with a diff when a plan changed', false)
    .option('--module <name>', 'the module whose Workflows interface is augmented', 'flowstream')
    .action(async (canvasIds: string[], flags: TypesFlags) => {
      report(await outcomeAbout(errorSubject(flags, context), () => types(canvasIds, flags, context)));
    });
}
