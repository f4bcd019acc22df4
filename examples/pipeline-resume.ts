/**
 * Resuming a pipeline: the checkpoint is saved as it changes; the first "process" dies mid-run (its
 * connection is cut, so not even an abort gets out), and a second one resumes from the saved
 * checkpoint: it watches the steps that ran or still run and starts only the ones that never did.
 * Runs against an emulator it starts itself: `npx tsx examples/pipeline-resume.ts`.
 * The examples import from `../src`; in your code, import from `flowstream` and `flowstream/emulator`.
 */
import { filter, firstValueFrom, lastValueFrom, share } from 'rxjs';
import { createClient } from '../src/index.js';
import { createEmulator, type Emulator } from '../src/emulator/index.js';
import { type PipelineCheckpoint, type PipelineDefinition, runPipeline } from '../src/index.js';

const speed = 50;
const emulator = await createEmulator({ speed });

function connect(server: Emulator, fetch?: typeof globalThis.fetch) {
  return createClient({
    apiKey: server.apiKey,
    baseUrl: server.url,
    scheduler: emulator.scheduler,
    ...(fetch === undefined ? {} : { fetch }),
  });
}

const definition: PipelineDefinition<'brief' | 'scan' | 'report'> = {
  steps: {
    brief: { canvasId: 'c-sample-linear' },
    scan: { canvasId: 'c-sample-parallel', dependsOn: ['brief'] },
    report: { canvasId: 'c-sample-files', dependsOn: ['scan'] },
  },
};

try {
  // The first process: saves every checkpoint, and dies once the second step runs.
  let alive = true;
  const first = connect(emulator, (input, init) => (alive ? fetch(input, init) : Promise.reject(new TypeError('process died'))));
  let saved = '';
  const events = runPipeline(first, definition).pipe(share());
  const died = firstValueFrom(events.pipe(filter((event) => event.type === 'checkpoint' && event.checkpoint.steps.scan?.status === 'running')));
  const subscription = events.subscribe({
    next: (event) => {
      if (event.type === 'checkpoint') saved = JSON.stringify(event.checkpoint);
    },
    error: () => undefined,
  });
  await died;
  alive = false;
  subscription.unsubscribe();
  console.log(`first process died; saved checkpoint: ${saved}`);

  // The second process: resumes from what was saved.
  const resume = JSON.parse(saved) as PipelineCheckpoint;
  const last = await lastValueFrom(runPipeline(connect(emulator), definition, { resume }).pipe(filter((event) => event.type === 'finished')));
  for (const [step, outcome] of Object.entries(last.outcomes)) console.log(`outcome ${step}: ${outcome.status}`);
  for (const canvasId of ['c-sample-linear', 'c-sample-parallel', 'c-sample-files']) {
    console.log(`${canvasId} started ${emulator.requests.list({ endpoint: 'run', canvasId }).length} time(s)`);
  }
} finally {
  await emulator.close();
}
