import { createClient } from '../../index.js';
import { createEmulator } from '../../emulator/index.js';
import { outputText } from '../../index.js';
import type { CliContext } from '../context.js';
import { describeError } from '../describe-error.js';
import { exitCodeFor } from '../exit-code.js';
import { formatDuration } from '../format/duration.js';
import { outcomeOfRun } from '../outcome.js';
import { createRenderer } from '../progress/create-renderer.js';
import { followRun } from '../progress/follow-run.js';
import { perRunRenderer } from '../progress/per-run-renderer.js';
import { demoPipeline } from './demo-pipeline.js';
import { DEMO_WORKFLOWS, REPORT_CANVAS_ID, REPORT_NODE_ID, RESEARCH_CANVAS_ID } from './demo-workflows.js';

/** Emulator time runs this much faster, so that the pipeline takes about ten seconds. */
export const DEMO_SPEED = 4;

function realServiceNote(env: CliContext['env']): readonly string[] {
  if (env['FLOWSTREAM_API_KEY'] === undefined || env['FLOWSTREAM_BASE_URL'] === undefined) return [];
  return [
    `FLOWSTREAM_API_KEY and FLOWSTREAM_BASE_URL are set (${env['FLOWSTREAM_BASE_URL']}).`,
    'The demo itself stays on the embedded emulator: its two workflows exist only there, and it spends',
    'none of your credits. To do the same against the service:',
    '  npx flowstream search                       # find your workflows',
    '  npx flowstream show <canvasId>              # their tasks and variables',
    '  npx flowstream run <canvasId> --var name=value --file name=./input.md',
    'and chain two of your workflows as src/cli/demo/demo-pipeline.ts does (thenRun + transferFiles).',
    '',
  ];
}

/**
 * `npm start`: an emulator in-process with accelerated time, a pipeline of two workflows — one with
 * parallel branches, the next fed the file the first produced — shown live, then the final output.
 * Resolves with the exit code.
 */
export async function runDemo(context: CliContext): Promise<number> {
  const began = Date.now();
  const print = (lines: readonly string[]): void => {
    context.stdout.write(`${lines.join('\n')}\n`);
  };
  const emulator = await createEmulator({ speed: DEMO_SPEED, workflows: DEMO_WORKFLOWS });
  try {
    print([
      ...realServiceNote(context.env),
      `flowstream demo — an embedded emulator at ${emulator.url}, time ${DEMO_SPEED}x faster`,
      `Pipeline: ${RESEARCH_CANVAS_ID} (three branches in parallel) → its brief.md → ${REPORT_CANVAS_ID}`,
      '',
    ]);
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, scheduler: emulator.scheduler });
    const renderer = perRunRenderer(() => createRenderer(context.stdout, { json: false, quiet: false }));
    const ending = await followRun(demoPipeline(client), { renderer, onInterrupt: 'abort', interrupts: context.interrupts, notices: context.stderr });
    const outcome = outcomeOfRun(ending);
    if (ending.kind === 'finished') {
      print(['', `Final output of ${REPORT_CANVAS_ID}:`, ...outputText(ending.result, { nodeId: REPORT_NODE_ID }).split('\n').map((line) => (line === '' ? '' : `  ${line}`)), '']);
      print([`Demo finished in ${formatDuration(Date.now() - began)}. Next: \`npx flowstream emulator\`, then \`npx flowstream run c-sample-parallel\`.`]);
    } else if (ending.kind === 'error') {
      context.stderr.write(`${describeError(ending.error).join('\n')}\n`);
    }
    return exitCodeFor(outcome);
  } finally {
    await emulator.close();
  }
}
