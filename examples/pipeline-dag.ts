/**
 * A pipeline as a DAG with `runPipeline`: research and a market scan run side by side, a report
 * waits for both; a translation branch fails, and with `onStepFailure: 'finish-running'` the other
 * branches still finish. Prints each step's progress and the checkpoint as it goes. Runs against an
 * emulator it starts itself: `npx tsx examples/pipeline-dag.ts`.
 * The examples import from `../src`; in your code, import from `flowstream` and `flowstream/emulator`.
 */
import { lastValueFrom, tap } from 'rxjs';
import { createClient, isWorkflowFailedError } from '../src/index.js';
import { createEmulator } from '../src/emulator/index.js';
import { outputText, type PipelineEvent, runPipeline } from '../src/index.js';

const speed = 50;
const emulator = await createEmulator({ speed });
const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, scheduler: emulator.scheduler });

type Step = 'research' | 'scan' | 'report' | 'translate' | 'publish';

function show(event: PipelineEvent<Step>): void {
  switch (event.type) {
    case 'step':
      if (event.event.type === 'started' || event.event.type === 'finished') {
        console.log(`${event.step}: ${event.event.type === 'started' ? 'started' : event.event.result.status}`);
      }
      break;
    case 'checkpoint':
      console.log(`checkpoint ${Object.entries(event.checkpoint.steps).map(([step, entry]) => `${step}=${entry.status}`).join(' ')}`);
      break;
    case 'finished':
      for (const [step, outcome] of Object.entries(event.outcomes)) console.log(`outcome ${step}: ${outcome.status}`);
      break;
    case 'detached':
      // Only with the `detach` option, which this pipeline does not use.
      break;
  }
}

try {
  const pipeline = runPipeline<Step>(
    client,
    {
      steps: {
        research: { canvasId: 'c-sample-linear' },
        scan: { canvasId: 'c-sample-parallel' },
        report: {
          canvasId: 'c-sample-files',
          dependsOn: ['research', 'scan'],
          input: (results) => ({ variables: { research: outputText(results.research!), scan: outputText(results.scan!) } }),
        },
        translate: { canvasId: 'c-sample-branch-failure', dependsOn: ['research'] },
        publish: { canvasId: 'c-sample-linear', dependsOn: ['translate'] },
      },
    },
    { onStepFailure: 'finish-running' },
  );
  await lastValueFrom(pipeline.pipe(tap(show))).catch((error: unknown) => {
    if (!isWorkflowFailedError(error)) throw error;
    console.log(`pipeline failed at step ${error.step ?? '?'}: ${error.message}`);
  });
} finally {
  await emulator.close();
}
