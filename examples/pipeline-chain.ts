/**
 * A chain of three workflows with `thenRun`: a report with files, a newsletter written from its text
 * with the report attached (downloaded without the API key, uploaded as a fileKey), then a brief.
 * Runs against an emulator it starts itself (50x faster): `npx tsx examples/pipeline-chain.ts`.
 * The examples import from `../src`; in your code, import from `flowstream` and `flowstream/emulator`.
 */
import { tap } from 'rxjs';
import { createClient, runResult } from '../src/index.js';
import { createEmulator } from '../src/emulator/index.js';
import { outputFile, outputText, thenRun, transferFiles } from '../src/index.js';

const speed = 50;
const emulator = await createEmulator({ speed });
const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, scheduler: emulator.scheduler });

try {
  const chain = client.run('c-sample-files').pipe(
    thenRun(client, 'c-sample-variables', async (report, { signal }) => {
      const [attachment] = await transferFiles(client, [outputFile(report, 'report.md')], { signal });
      console.log(`report.md handed on as ${attachment!.fileKey}`);
      return { variables: { topic: outputText(report), tone: 'casual', attachment: attachment!.fileKey } };
    }),
    thenRun(client, 'c-sample-linear', (newsletter) => ({ variables: { brief: outputText(newsletter) } })),
    tap((event) => {
      if (event.type === 'started') console.log(`started ${event.canvasId ?? '?'} as ${event.executionId}`);
    }),
  );
  const result = await runResult(chain);
  console.log(`chain finished: ${result.canvasId ?? '?'} ${result.status}: ${outputText(result)}`);
} finally {
  await emulator.close();
}
