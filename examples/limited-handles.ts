/**
 * One run at a time per user, for work that is more than one Observable: each request takes a slot of
 * the user's limiter with `acquire()`, then uploads its notes, starts the run as a handle
 * (`client.startRun`) and waits for its result, and gives the slot back at the end, whatever happened.
 * A user's second request waits for the first to end; another user is not held up. A "quick question"
 * uses `tryAcquire()` instead: refused at once while the user has a run going.
 *
 *   npx tsx examples/limited-handles.ts          (its own emulator; FLOWSTREAM_* for the real service)
 */
import { createRunLimiter } from '../src/index.js';
import { connectForExample } from './example-connection.js';

const { client, close } = await connectForExample();
const perUser = createRunLimiter({ perKey: 1, mode: 'queue' });

/** One request of `user`: upload, start and result in one slot of the user's. */
async function ask(user: string, canvasId: string, notes: string): Promise<void> {
  // Give up after ten minutes in the line: the promise rejects and no slot is taken.
  const release = await perUser.acquire(user, { signal: AbortSignal.timeout(10 * 60_000) });
  try {
    const [uploaded] = await client.files.upload([{ name: `${user}-notes.md`, data: new TextEncoder().encode(notes) }]);
    const run = client.startRun(canvasId, { variables: { notes: uploaded?.fileKey ?? '' } }, { timeoutMs: 30 * 60_000 });
    console.log(`[${user}] started ${canvasId} as ${await run.executionId}`);
    const result = await run.result;
    console.log(`[${user}] ended ${canvasId}: ${result.endedBy}`);
  } finally {
    release();
  }
}

/** A question answered only if the user has no run going: `tryAcquire` never waits. */
async function quickQuestion(user: string, canvasId: string): Promise<void> {
  const release = perUser.tryAcquire(user);
  if (release === undefined) {
    console.log(`[${user}] quick question refused: a run is going`);
    return;
  }
  try {
    const result = await client.startRun(canvasId).result;
    console.log(`[${user}] quick question: ${result.endedBy}`);
  } finally {
    release();
  }
}

try {
  await Promise.all([
    ask('ana', 'c-sample-linear', '# First\n'),
    ask('ana', 'c-sample-parallel', '# Second\n'),
    ask('bo', 'c-sample-linear', '# Notes\n'),
    quickQuestion('ana', 'c-sample-linear'),
  ]);
} finally {
  await close();
}
