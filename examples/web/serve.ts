/**
 * `npm run web`: the dashboard against a local emulator in one command. Builds the page, starts the
 * emulator (10× faster than the service; like the service, it answers no page), a client holding the
 * key, and the dashboard's servers on 127.0.0.1 — the page and its app routes, and a run relay on
 * another origin — and prints the page's link. The page never sees the key.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createClient } from '../../src/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import { bundleProgressPage } from './bundle.js';
import { DASHBOARD_WORKFLOWS, startDashboardServer } from './dashboard-server.js';

const outdir = fileURLToPath(new URL('dist', import.meta.url));
await bundleProgressPage(outdir);
const emulator = await createEmulator({ speed: 10 });
const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, scheduler: emulator.scheduler });
const dashboard = await startDashboardServer({ client, pageDir: outdir, workflows: DASHBOARD_WORKFLOWS, secret: randomBytes(32).toString('base64url'), scheduler: emulator.scheduler });
console.log(`Open ${dashboard.url}/index.html\n(relay: ${dashboard.relay}; the emulator at ${emulator.url} answers no page)\nCtrl-C stops the page, the relay and the emulator.`);

process.once('SIGINT', () => {
  void dashboard.close().then(() => emulator.close());
});
