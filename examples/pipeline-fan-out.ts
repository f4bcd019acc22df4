/**
 * A fan-out with `runEach`: one workflow over twelve inputs, four executions at a time, every request
 * through the client's one budget (so the emulator's real rate limit never answers 429), each result
 * printed as it finishes. Runs against an emulator it starts itself: `npx tsx examples/pipeline-fan-out.ts`.
 * The examples import from `../src`; in your code, import from `flowstream` and `flowstream/emulator`.
 */
import { lastValueFrom, tap } from 'rxjs';
import { createClient } from '../src/index.js';
import { createEmulator } from '../src/emulator/index.js';
import { outputText, runEach } from '../src/index.js';

const speed = 50;
const emulator = await createEmulator({ speed });
const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, scheduler: emulator.scheduler });

const topics = ['tides', 'comets', 'glaciers', 'volcanoes', 'coral', 'auroras', 'monsoons', 'dunes', 'geysers', 'fjords', 'deltas', 'reefs'];

try {
  let done = 0;
  await lastValueFrom(
    runEach(client, 'c-sample-variables', topics.map((topic) => ({ variables: { topic, tone: 'casual' } })), { concurrency: 4, order: 'completion' }).pipe(
      tap(({ index, result }) => {
        done += 1;
        console.log(`[${done}/${topics.length}] ${topics[index] ?? '?'}: ${outputText(result)}`);
      }),
    ),
  );
  const tooMany = emulator.requests.list({ status: 429 }).length;
  console.log(`fan-out finished: ${done} runs, ${emulator.requests.list().length} requests, ${tooMany} answered 429`);
} finally {
  await emulator.close();
}
