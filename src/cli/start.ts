/**
 * `npm start`: serves the emulator with its sample workflows on loopback and says how to reach it,
 * until Ctrl-C. (The full demo arrives with the `flowstream` command.)
 */
import { createEmulator } from '../emulator/index.js';

const emulator = await createEmulator({ speed: 10 });
const lines = [
  `flowstream emulator listening on ${emulator.url} (time runs 10x faster)`,
  `API key: ${emulator.apiKey}`,
  '',
  'Sample workflows:',
  ...emulator.workflows.list().map(({ workflow }) => `  ${workflow.canvasId.padEnd(28)} ${workflow.title}`),
  '',
  'Try:',
  `  curl -s -H 'Authorization: Bearer ${emulator.apiKey}' ${emulator.url}/openapi/workflows`,
  `  curl -s -X POST -H 'Authorization: Bearer ${emulator.apiKey}' ${emulator.url}/openapi/workflow/c-sample-parallel/run`,
  '',
  'Press Ctrl-C to stop.',
];
process.stdout.write(`${lines.join('\n')}\n`);

const stop = (): void => {
  void emulator.close().then(() => {
    process.stdout.write('emulator closed\n');
    process.exit(0);
  });
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
