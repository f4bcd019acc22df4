/**
 * The run loop of a chat bot: each user may have two runs at once (a third is refused before anything
 * starts), each run shows a progress card refreshed at most every 5 s, a user can cancel (the execution
 * is aborted once), every run has a 30-minute limit, and the output files are listed at the end.
 *
 *   npx tsx examples/chat-bot-runs.ts          (its own emulator; FLOWSTREAM_* for the real service)
 */
import { filter, Subscription } from 'rxjs';
import { createRunLimiter, isConcurrencyLimitError, shareRun, toRunState } from '../src/index.js';
import { connectForExample } from './example-connection.js';

const { client, close } = await connectForExample();
const perUser = createRunLimiter({ perKey: 2, mode: 'reject' });

/** One chat request: a run under the user's limit, a card at most every 5 s, then its end, or Cancel once it has started. */
function ask(user: string, canvasId: string, cancelOnceStarted = false): Promise<void> {
  return new Promise((done) => {
    const owned = new Subscription();
    const finish = (line: string): void => {
      console.log(`[${user}] ${canvasId}: ${line}`);
      owned.unsubscribe(); // leaving the shared run before its end aborts the execution, once
      done();
    };
    let result = '';
    const run$ = perUser.run(user, () => client.run(canvasId, {}, { timeoutMs: 30 * 60_000, failOnWorkflowError: false })).pipe(shareRun());
    owned.add(
      run$.pipe(toRunState({ sampleMs: 5_000 }), filter((state) => state.progress.total > 0)).subscribe({
        next: (state) => {
          const now = state.nodes.find((node) => node.status === 'executing')?.title ?? '—';
          console.log(`[${user}] ${canvasId}: ${state.progress.succeeded}/${state.progress.total} steps, now: ${now}`);
        },
        error: () => undefined,
        // The card's last state comes with the run's end: only then is the answer posted.
        complete: () => {
          finish(result);
        },
      }),
    );
    owned.add(
      run$.subscribe({
        next: (event) => {
          if (event.type === 'started' && cancelOnceStarted) finish(`cancelled ${event.executionId}`);
          if (event.type === 'finished') {
            const files = event.result.files.map((file) => file.name).join(', ');
            result = `${event.result.endedBy}${files === '' ? '' : `, files: ${files}`}`;
          }
        },
        error: (error: unknown) => {
          finish(isConcurrencyLimitError(error) ? `refused: ${error.message}` : `error: ${String(error)}`);
        },
      }),
    );
  });
}

try {
  await Promise.all([ask('ana', 'c-sample-files'), ask('ana', 'c-sample-linear', true), ask('ana', 'c-sample-parallel'), ask('bo', 'c-sample-linear')]);
} finally {
  await close();
}
