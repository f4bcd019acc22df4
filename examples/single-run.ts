/**
 * One run with progress: node changes, text as it arrives, files at the end. Ctrl-C aborts the execution.
 *
 *   npx tsx examples/single-run.ts [canvasId]      (default c-sample-parallel)
 */
import { tap } from 'rxjs';
import { isWorkflowFailedError, type RunEvent, runResult } from '../src/index.js';
import { connectForExample } from './example-connection.js';

const canvasId = process.argv[2] ?? 'c-sample-parallel';
const { client, close } = await connectForExample();

// Aborting the signal ends the run and aborts the execution (once); the run then errors with the reason.
const interrupted = new AbortController();
process.once('SIGINT', () => {
  interrupted.abort(new Error('Interrupted'));
});

const titles = new Map<string, string>();

function show(event: RunEvent): void {
  switch (event.type) {
    case 'started':
      console.log(`started ${event.executionId}`);
      break;
    case 'node':
      if (event.title !== undefined) titles.set(event.nodeId, event.title);
      console.log(`node ${event.title ?? event.nodeId}: ${event.previous ?? 'new'} → ${event.status}${event.error === undefined ? '' : ` (${event.error.message})`}`);
      break;
    case 'message':
      console.log(`  ${titles.get(event.nodeId) ?? event.nodeId} says: ${event.delta}`);
      break;
    case 'connection':
      console.log(event.reconnecting === undefined ? 'reconnected' : `reconnecting (${event.reconnecting.error}, attempt ${event.reconnecting.attempts})`);
      break;
    case 'status':
    case 'file':
    case 'snapshot': // only a late subscriber of a shared run gets one
    case 'finished':
      break;
  }
}

try {
  const result = await runResult(client.run(canvasId, {}, { signal: interrupted.signal }).pipe(tap(show)));
  console.log(`finished: ${result.status}, ${result.output.length} task nodes`);
  for (const file of result.files) console.log(`file ${file.name} (${file.type}) ${file.url ?? ''}`);
} catch (error) {
  if (interrupted.signal.aborted) {
    console.log('interrupted: the execution was aborted');
    process.exitCode = 130;
  } else {
    if (!isWorkflowFailedError(error)) throw error;
    console.log(`failed: ${error.result.failedNodes.map((node) => `${node.title ?? node.nodeId}: ${node.error?.message ?? ''}`).join('; ')}`);
    process.exitCode = 1;
  }
} finally {
  await close();
}
