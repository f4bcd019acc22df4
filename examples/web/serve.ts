/**
 * `npm run web`: the progress page against a local emulator in one command. Builds the page, starts
 * the emulator (10× faster than the service) and a static server, both on 127.0.0.1, and prints a
 * link whose fragment fills in the connection.
 */
import { fileURLToPath } from 'node:url';
import { createEmulator } from '../../src/emulator/index.js';
import { bundleProgressPage } from './bundle.js';
import { serveFolder } from './static-server.js';

const outdir = fileURLToPath(new URL('dist', import.meta.url));
await bundleProgressPage(outdir);
const site = await serveFolder(outdir);
// The page calls the API from the browser: the emulator answers its origin, which the service would not.
const emulator = await createEmulator({ speed: 10, cors: { origins: [site.url] } });
const connection = new URLSearchParams({ baseUrl: emulator.url, apiKey: emulator.apiKey });
console.log(`Open ${site.url}/index.html#${connection.toString()}\nCtrl-C stops the page and the emulator.`);

process.once('SIGINT', () => {
  void Promise.all([site.close(), emulator.close()]);
});
