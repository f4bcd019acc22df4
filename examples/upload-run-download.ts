/**
 * Upload → run → download: a local file goes in as a workflow variable, the output files come back to disk.
 *
 *   npx tsx examples/upload-run-download.ts [file] [canvasId] [variable]
 *
 * Against the emulator the defaults use a workflow this example adds (`c-example-summarise`, variable
 * `document`); against the service, name one of yours that takes a file.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { runResult } from '../src/index.js';
import type { WorkflowDefinition } from '../src/emulator/index.js';
import { downloadToFile, fromPath } from '../src/node/index.js';
import { connectForExample } from './example-connection.js';

const SUMMARISE_ID = 'c-example-summarise';
const SUMMARISE: WorkflowDefinition = {
  canvasId: SUMMARISE_ID,
  title: 'Summarise a document',
  variables: [{ name: 'document', variableType: 'resource', required: true }],
  nodes: [
    { id: 'node-start', type: 'start', title: 'Start' },
    { id: 'node-summarise', title: 'Summarise', parents: ['node-start'], durationMs: 4_000,
      messages: [{ content: 'The document, in three lines.' }],
      files: [{ name: 'summary.md', type: 'text/markdown', content: '# Summary\n\nThree lines.\n' }] },
  ],
};

const work = await mkdtemp(join(tmpdir(), 'flowstream-example-'));
const givenFile = process.argv[2];
const canvasId = process.argv[3] ?? SUMMARISE_ID;
const variable = process.argv[4] ?? 'document';
const input = givenFile ?? join(work, 'notes.md');
if (givenFile === undefined) await writeFile(input, '# Notes\n\nTides follow the moon.\n');

const { client, close } = await connectForExample([SUMMARISE]);
try {
  // fromPath reads the file lazily, as the upload streams it.
  const [uploaded] = await client.files.upload([await fromPath(input)]);
  if (uploaded === undefined) throw new Error('The upload returned no key');
  console.log(`uploaded ${uploaded.fileName} as ${uploaded.fileKey}`);

  const result = await runResult(client.run(canvasId, { variables: { [variable]: uploaded.fileKey } }));
  console.log(`run ${result.executionId}: ${result.status}`);

  for (const file of result.files) {
    // The name comes from the server: keep only its last part, so it cannot point outside `work`.
    const target = join(work, basename(file.name));
    // Output URLs are public: downloadToFile never sends the API key with them (service.md §4.6).
    const bytes = await downloadToFile(file, target);
    console.log(`downloaded ${file.name} (${bytes} bytes) to ${target}`);
  }
} finally {
  await close();
}
