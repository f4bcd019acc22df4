import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveFolder, type StaticSite } from '../../examples/web/static-server.js';
import { type Client, createClient } from '../../src/client.js';
import { createEmulator, createManualClock, type Emulator } from '../../src/emulator/index.js';
import { toNodeListener } from '../../src/relay/node-listener.js';
import { createRunRelay, type RunRelay } from '../../src/relay/run-relay.js';
import { createRunTokens, type RunTokens } from '../../src/relay/run-tokens.js';
import { caughtUpWith, countingFetch, type PageRequests, trackPageRequests, waitsOnRelayService, watchRelayWrites } from './caught-up.js';
import { CHROMIUM_PATH, hasChromium, launchChromium } from './chromium.js';

const PAGE_DIR = fileURLToPath(new URL('react-page/', import.meta.url));
/** Page conditions wait this long at most (time itself moves by hand: the emulator's clock is manual). */
const WAIT_MS = 10_000;

/** The page in development mode: React's StrictMode mounts each component twice only there. */
async function bundleReactPage(outdir: string): Promise<void> {
  await build({
    entryPoints: [join(PAGE_DIR, 'main.tsx')],
    outfile: join(outdir, 'main.js'),
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"development"' },
    logLevel: 'silent',
  });
  await copyFile(join(PAGE_DIR, 'index.html'), join(outdir, 'index.html'));
}

// Three origins on loopback: the page's, the relay's (which answers the page's), the emulator's (which, like the service, answers no page).
describe('flowstream/react in Chromium: useRun(connectRun(…)) through a relay on another origin', () => {
  let outdir = '';
  let site: StaticSite | undefined;
  let emulator: Emulator | undefined;
  let client: Client;
  let relay: RunRelay | undefined;
  let relayServer: Server | undefined;
  let relayBase = '';
  let browser: Browser | undefined;
  let tokens: RunTokens;
  const clock = createManualClock();
  const serverFetch = countingFetch();
  const relayWrites = watchRelayWrites(() => new URL(relayBase === '' ? 'http://127.0.0.1:0' : relayBase).origin);
  /** The event-stream connections the relay was asked for. */
  const streams: string[] = [];

  beforeAll(async () => {
    if (!hasChromium()) throw new Error(`${CHROMIUM_PATH} is missing: npm test installs Debian's chromium first (scripts/system-packages.mjs)`);
    outdir = await mkdtemp(join(tmpdir(), 'flowstream-react-'));
    await bundleReactPage(outdir);
    site = await serveFolder(outdir);
    [emulator, browser] = await Promise.all([createEmulator({ clock, rateLimit: false }), launchChromium()]);
    client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, scheduler: emulator.scheduler, budget: false, fetch: serverFetch.fetch });
    tokens = createRunTokens({ secret: 'the react page test secret, thirty-two bytes or more', scheduler: emulator.scheduler });
    relay = createRunRelay({
      client,
      tokens,
      basePath: '/flowstream',
      scheduler: emulator.scheduler,
      cors: { origins: [site.url] },
      start: async (request) => ({ canvasId: ((await request.json()) as { canvasId: string }).canvasId }),
    });
    const listener = toNodeListener(relay);
    relayServer = createServer((request, response) => {
      if (request.method === 'GET') streams.push(request.url ?? '');
      listener(request, response);
    });
    await new Promise<void>((resolve) => relayServer!.listen(0, '127.0.0.1', resolve));
    relayBase = `http://127.0.0.1:${(relayServer.address() as AddressInfo).port}/flowstream`;
  }, 60_000);

  afterAll(async () => {
    relayWrites.close();
    relay?.close();
    relayServer?.closeAllConnections();
    await Promise.all([
      browser?.close(),
      site?.close(),
      new Promise<void>((resolve) => { if (relayServer === undefined) resolve(); else relayServer.close(() => { resolve(); }); }),
    ]);
    await emulator?.close();
    if (outdir !== '') await rm(outdir, { recursive: true, force: true });
  });

  /** Until `page` has caught up with the clock: see `caughtUpWith`. */
  const caughtUp = (page: Page, pageRequests: PageRequests): Promise<void> => caughtUpWith({ clock, serverFetch, relayWrites, page, pageRequests, waitsOnService: waitsOnRelayService(client.hub, emulator!, relayWrites), timeoutMs: WAIT_MS });

  /**
   * Moves the emulator's clock to its next timer (the relay's client reads on it), at least half a second
   * a step and never past `untilTime`, each step once the page has caught up with the last, until `done` holds.
   */
  async function stepUntil(page: Page, pageRequests: PageRequests, done: string | (() => boolean), untilTime = Number.POSITIVE_INFINITY): Promise<void> {
    const holds = typeof done === 'string' ? () => page.locator(done).isVisible() : () => Promise.resolve(done());
    await caughtUp(page, pageRequests);
    for (let step = 0; step < 400 && !(await holds()); step++) {
      const to = Math.min(untilTime, Math.max(clock.now() + 500, clock.nextTimerAt() ?? clock.now()));
      clock.advance(Math.max(0, to - clock.now()));
      await caughtUp(page, pageRequests);
    }
    if (typeof done === 'string') await page.locator(done).waitFor();
    else expect(done()).toBe(true);
  }

  /** Bounded polling for readiness, time standing still. */
  async function waitFor(condition: () => boolean): Promise<void> {
    for (let waited = 0; !condition(); waited += 10) {
      if (waited > WAIT_MS) throw new Error('waitFor: the condition did not hold in time');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it('shows the run live to its end in StrictMode over one connection, while the page’s own call to the API is refused', async () => {
    const { executionId } = await client.executions.start('c-sample-linear');
    const token = await tokens.sign({ executionId, scope: ['read'], ttlMs: 600_000 });
    const fragment = new URLSearchParams({ eventsUrl: `${relayBase}/executions/${executionId}/events`, executionId, token, apiUrl: emulator!.url, apiKey: emulator!.apiKey });
    const page: Page = await browser!.newPage();
    const pageRequests = trackPageRequests(page);
    const pageErrors: Error[] = [];
    page.on('pageerror', (error) => pageErrors.push(error));
    page.setDefaultTimeout(WAIT_MS);
    try {
      await page.goto(`${site!.url}/index.html#${fragment.toString()}`);

      // The direct call: the emulator's preflight allows nothing, so the browser never sends it.
      await page.getByTestId('direct').filter({ hasText: /\S/ }).waitFor();
      await expect(page.getByTestId('direct').textContent()).resolves.toBe('refused: TypeError');
      expect(emulator!.requests.list({ endpoint: 'preflight' }).length).toBeGreaterThanOrEqual(1);
      expect(emulator!.requests.list({ endpoint: 'search' })).toEqual([]);

      // Time stands still until the page's stream reached the relay, then moves by hand: the page follows the run as it goes.
      await waitFor(() => streams.some((url) => url.includes(`/executions/${executionId}/events`)));
      const progress = page.getByTestId('progress');
      await stepUntil(page, pageRequests, '[data-testid="run"][data-state="finish"]');
      await expect(progress.textContent()).resolves.toBe('finish 3/3');
      await expect(page.locator('[data-testid="node"][data-status="finish"]').count()).resolves.toBe(3);
      // Live: the page showed the run part way, before its end.
      const shown = await page.evaluate(() => (globalThis as { shownProgress?: string[] }).shownProgress ?? []);
      const partWay = shown.filter((line) => {
        const [, done, total] = /^executing (\d+)\/(\d+)$/u.exec(line) ?? [];
        return done !== undefined && Number(done) > 0 && Number(done) < Number(total);
      });
      expect(partWay, JSON.stringify(shown)).not.toEqual([]);
      // StrictMode mounted the component twice: the run was still followed once, over one connection.
      expect(streams.filter((url) => url.includes(`/executions/${executionId}/events`))).toHaveLength(1);
      expect(emulator!.requests.list({ endpoint: 'abort' })).toEqual([]);
      expect(pageErrors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 20_000);

  it('starts a run with useStartRun through the relay, follows it and cancels it (aborted once)', async () => {
    const page: Page = await browser!.newPage();
    const pageRequests = trackPageRequests(page);
    const pageErrors: Error[] = [];
    page.on('pageerror', (error) => pageErrors.push(error));
    page.setDefaultTimeout(WAIT_MS);
    try {
      await page.goto(`${site!.url}/index.html#${new URLSearchParams({ relayBase, apiUrl: emulator!.url, apiKey: emulator!.apiKey }).toString()}`);
      const starter = page.getByTestId('starter');
      await expect(starter.getAttribute('data-status')).resolves.toBe('idle');
      await page.getByRole('button', { name: 'Run' }).click();
      // The start needs no timer: time stands still until the page has the execution.
      await page.locator('[data-testid="starter"][data-status="running"]').waitFor();
      const executionId = (await starter.getAttribute('data-execution-id')) ?? '';
      expect(executionId).toMatch(/^we-/u);
      // The run's readings come through the relay.
      // A first reading, and the abort, no further than 5 s into the run (its first node takes 6 s): it is cancelled part way, whatever the machine's speed.
      const partWay = emulator!.executions.get(executionId)!.createdAt + 5_000;
      await stepUntil(page, pageRequests, '[data-testid="starter-progress"]:text-matches("^[0-9]+/[0-9]+$")', partWay);

      // Time moves (within the first 5 s) until the abort has reached the service, then to the run's end.
      await page.getByRole('button', { name: 'Cancel' }).click();
      // Said at once, with time standing still: the abort and its confirmation come later.
      await page.locator('[data-testid="starter"][data-cancelling="true"]').waitFor();
      await stepUntil(page, pageRequests, () => emulator!.requests.list({ endpoint: 'abort', executionId }).length === 1, partWay);
      await stepUntil(page, pageRequests, '[data-testid="starter"][data-status="ended"]');
      await expect(starter.getAttribute('data-ended-by')).resolves.toBe('aborted');
      await expect(starter.getAttribute('data-cancelling')).resolves.toBe('false');
      expect(emulator!.requests.list({ endpoint: 'abort', executionId })).toHaveLength(1);
      expect(emulator!.executions.get(executionId)?.status).toBe('failed');
      expect(pageErrors).toEqual([]);
    } finally {
      await page.close();
    }
  }, 20_000);

  it('starts a run with useStartRun on a client, and follows it to its end', async () => {
    const ownClock = createManualClock();
    // This emulator answers the page: the page's client calls it directly.
    const direct = await createEmulator({ clock: ownClock, rateLimit: false, cors: { origins: [site!.url] } });
    const page: Page = await browser!.newPage();
    const pageErrors: Error[] = [];
    page.on('pageerror', (error) => pageErrors.push(error));
    page.setDefaultTimeout(WAIT_MS);
    try {
      await page.goto(`${site!.url}/index.html#${new URLSearchParams({ clientApiUrl: direct.url, clientApiKey: direct.apiKey }).toString()}`);
      const starter = page.getByTestId('starter');
      await page.getByRole('button', { name: 'Run' }).click();
      await page.locator('[data-testid="starter"][data-status="running"]').waitFor();
      const executionId = (await starter.getAttribute('data-execution-id')) ?? '';
      expect(direct.executions.list().map((execution) => execution.executionId)).toEqual([executionId]);

      // The run's 15 s pass at once; the page's client (on real time) reads the end on its next poll.
      ownClock.advance(60_000);
      await page.locator('[data-testid="starter"][data-status="ended"]').waitFor();
      await expect(starter.getAttribute('data-ended-by')).resolves.toBe('finish');
      await expect(page.getByTestId('starter-progress').textContent()).resolves.toBe('3/3');
      expect(direct.requests.list({ endpoint: 'run' })).toHaveLength(1);
      expect(direct.requests.list({ endpoint: 'abort' })).toEqual([]);
      expect(pageErrors).toEqual([]);
    } finally {
      await page.close();
      await direct.close();
    }
  }, 20_000);
});
