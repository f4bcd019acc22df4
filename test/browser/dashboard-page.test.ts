import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bundleProgressPage } from '../../examples/web/bundle.js';
import { DASHBOARD_WORKFLOWS, type DashboardServer, startDashboardServer } from '../../examples/web/dashboard-server.js';
import { type Client, createClient } from '../../src/client.js';
import { createEmulator, createManualClock, type Emulator } from '../../src/emulator/index.js';
import { caughtUpWith, countingFetch, type PageRequests, trackPageRequests, waitsOnRelayService, watchRelayWrites } from './caught-up.js';
import { CHROMIUM_PATH, hasChromium, launchChromium } from './chromium.js';

/** Where the README's picture comes from; rewritten only on request, so a test run leaves the tree clean. */
const SCREENSHOT = fileURLToPath(new URL('../../docs/progress-page.png', import.meta.url));
const updateScreenshot = (process.env['UPDATE_SCREENSHOT'] ?? '') !== '';
/** Page conditions wait this long at most (time itself moves by hand: the emulator's clock is manual). */
const WAIT_MS = 10_000;

interface ShownNode {
  readonly id: string;
  readonly status: string;
}

function shownNodes(page: Page): Promise<ShownNode[]> {
  return page.getByTestId('node').evaluateAll((boxes) => boxes.map((box) => ({ id: box.getAttribute('data-node-id') ?? '', status: box.getAttribute('data-status') ?? '' })));
}

// Three origins on loopback: the page's (with the app's routes), the relay's (which answers the page's), and the emulator's (which, like the service, answers no page).
describe('the dashboard in Chromium, through the relay', () => {
  let outdir = '';
  let emulator: Emulator | undefined;
  let client: Client;
  let dashboard: DashboardServer | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let pageErrors: Error[] = [];
  let pageRequests: PageRequests;
  const clock = createManualClock();
  const serverFetch = countingFetch();
  const relayWrites = watchRelayWrites(() => new URL(dashboard?.relay ?? 'http://127.0.0.1:0').origin);

  beforeAll(async () => {
    if (!hasChromium()) throw new Error(`${CHROMIUM_PATH} is missing: npm test installs Debian's chromium first (scripts/system-packages.mjs)`);
    outdir = await mkdtemp(join(tmpdir(), 'flowstream-web-'));
    await bundleProgressPage(outdir);
    [emulator, browser] = await Promise.all([createEmulator({ clock }), launchChromium()]);
    client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, scheduler: emulator.scheduler, fetch: serverFetch.fetch });
    dashboard = await startDashboardServer({ client, pageDir: outdir, workflows: DASHBOARD_WORKFLOWS, secret: 'the dashboard test secret, thirty-two bytes or more', scheduler: emulator.scheduler });
  }, 60_000);

  afterAll(async () => {
    relayWrites.close();
    await Promise.all([browser?.close(), dashboard?.close()]);
    await emulator?.close();
    if (outdir !== '') await rm(outdir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    pageErrors = [];
    page = await browser!.newPage({ viewport: { width: 1100, height: 900 } });
    page.setDefaultTimeout(WAIT_MS);
    page.on('pageerror', (error) => pageErrors.push(error));
    pageRequests = trackPageRequests(page);
    await page.goto(`${dashboard!.url}/index.html`);
    await page.locator('#run-button:enabled').waitFor();
  });

  afterEach(async () => {
    await page.close();
    expect(pageErrors).toEqual([]);
  });

  /** Until the page has caught up with the clock: see `caughtUpWith`. */
  const caughtUp = (): Promise<void> => caughtUpWith({ clock, serverFetch, relayWrites, page, pageRequests, waitsOnService: waitsOnRelayService(client.hub, emulator!, relayWrites), timeoutMs: WAIT_MS });

  /**
   * Moves the emulator's clock to its next timer (the server's client reads on it), at least half a
   * second a step and never past `untilTime`, each step once the page has caught up with the last, until `done` holds.
   */
  async function stepUntil(done: string | (() => boolean | Promise<boolean>), untilTime = Number.POSITIVE_INFINITY, onStep: () => Promise<void> = () => Promise.resolve()): Promise<void> {
    const holds = typeof done === 'string' ? () => page.locator(done).isVisible() : async () => done();
    await caughtUp();
    for (let step = 0; step < 400 && !(await holds()); step++) {
      const to = Math.min(untilTime, Math.max(clock.now() + 500, clock.nextTimerAt() ?? clock.now()));
      clock.advance(Math.max(0, to - clock.now()));
      await caughtUp();
      await onStep();
    }
    if (typeof done === 'string') await page.locator(done).waitFor();
    else expect(await done()).toBe(true);
  }

  /** Runs the workflow titled `title` and answers its card and execution id. */
  async function run(title: string): Promise<{ card: ReturnType<Page['locator']>; executionId: string }> {
    await page.getByLabel('Workflow', { exact: true }).selectOption({ label: title });
    const executions = emulator!.executions.list().length;
    await page.getByRole('button', { name: 'Run' }).click();
    // The start goes through the server's budget, which may pace it: time moves until the service has
    // the execution, and no further — the page then learns its id with the clock standing still, so a
    // slow page does not let the run go on meanwhile.
    await stepUntil(() => emulator!.executions.list().length > executions);
    const card = page.getByTestId('run').first();
    // Timers already due (a 0 ms one set after the last step) fire on each look, time itself standing still.
    await expect.poll(async () => {
      clock.advance(0);
      return (await card.getAttribute('data-execution-id')) ?? '';
    }, { timeout: WAIT_MS }).not.toBe('');
    return { card, executionId: (await card.getAttribute('data-execution-id')) ?? '' };
  }

  it('runs an allowed workflow live to its end: graph with edges, timeline, text, a previewed picture, the budget; no key on the page, its own call to the API refused', async () => {
    // No key field, no key anywhere in the page; the page's own call to the API is refused by the browser (no CORS for it).
    await expect(page.locator('input[type="password"], input[name="apiKey"]').count()).resolves.toBe(0);
    expect(await page.content()).not.toContain(emulator!.apiKey);
    const direct = await page.evaluate(async (url) => {
      try {
        return `answered ${(await fetch(`${url}/openapi/workflows`, { headers: { Authorization: 'Bearer rf_guess' } })).status}`;
      } catch (error) {
        return `refused: ${error instanceof Error ? error.name : 'unknown'}`;
      }
    }, emulator!.url);
    expect(direct).toBe('refused: TypeError');
    expect(emulator!.requests.list({ endpoint: 'preflight' }).length).toBeGreaterThanOrEqual(1);
    expect(emulator!.requests.list({ endpoint: 'search' })).toEqual([]);
    // The relay starts only what the server allows.
    const refused = await page.evaluate(async (relay) => (await fetch(`${relay}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ canvasId: 'c-sample-credit' }) })).status, dashboard!.relay);
    expect(refused).toBe(403);

    const { card, executionId } = await run('Quarterly report with files');
    // The graph: the chart depends on the report, one column further, joined by an edge.
    await expect(card.locator('[data-node-id="node-report"]').getAttribute('data-column')).resolves.toBe('0');
    await expect(card.locator('[data-node-id="node-chart"]').getAttribute('data-column')).resolves.toBe('1');
    await expect(card.getByTestId('edge').evaluateAll((edges) => edges.map((edge) => `${edge.getAttribute('data-from')}→${edge.getAttribute('data-to')}`))).resolves.toEqual(['node-report→node-chart']);
    // No empty headings while nothing came yet.
    await expect(card.getByTestId('files').isHidden()).resolves.toBe(true);
    await expect(card.getByTestId('texts').isHidden()).resolves.toBe(true);

    // Live: the card shows the run part way (the report done, the chart at work) before its end.
    const seen = new Set<string>();
    const look = async (): Promise<void> => { seen.add(JSON.stringify(await shownNodes(page))); };
    await stepUntil('[data-testid="run"][data-state="finish"]', Number.POSITIVE_INFINITY, look);
    expect([...seen]).toContain(JSON.stringify([{ id: 'node-report', status: 'finish' }, { id: 'node-chart', status: 'executing' }]));
    expect(await shownNodes(page)).toEqual([{ id: 'node-report', status: 'finish' }, { id: 'node-chart', status: 'finish' }]);
    await expect(card.getByTestId('run-status').textContent()).resolves.toMatch(/^Finished: 2 of 2 node\(s\) succeeded in /u);
    await expect(card.getByTestId('progress').getAttribute('data-succeeded')).resolves.toBe('2');
    // The timeline: one bar per node, the chart's after the report's.
    const bars = await card.getByTestId('timeline-bar').evaluateAll((all) => all.map((bar) => ({ id: bar.getAttribute('data-node-id'), left: Number.parseFloat((bar as HTMLElement).style.left), hidden: (bar as HTMLElement).hidden })));
    expect(bars.map((bar) => [bar.id, bar.hidden])).toEqual([['node-report', false], ['node-chart', false]]);
    expect(bars[1]!.left).toBeGreaterThan(bars[0]!.left);
    await expect(card.locator('[data-testid="node-text"][data-node-id="node-report"] .node-text').textContent()).resolves.toBe('The report is ready.');
    // Files as links, the picture previewed and decoded (not a broken image).
    await expect(card.getByTestId('files').getByRole('link').allTextContents()).resolves.toEqual(['report.md', 'figures.csv', 'chart.png']);
    const preview = card.getByTestId('files').getByRole('img', { name: 'chart.png' });
    await expect.poll(() => preview.evaluate((image) => (image as HTMLImageElement).complete && (image as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);
    // The budget meter: what the server's client counted, never the key.
    const meter = page.getByTestId('budget');
    await expect.poll(async () => Number(await meter.getAttribute('data-used-minute'))).toBeGreaterThan(3);
    expect(emulator!.requests.list({ endpoint: 'abort', executionId })).toEqual([]);
    await expect(page.getByTestId('error').textContent()).resolves.toBe('');
    const picture = await page.screenshot({ fullPage: true, ...(updateScreenshot ? { path: SCREENSHOT } : {}) });
    expect(picture.length).toBeGreaterThan(0);
  }, 20_000);

  it('shows a failed run as failed at once (Cancel off, not Running), with failed and succeeded apart on its bar', async () => {
    const { card } = await run('Translation with a failing branch');
    // The card never says Running with Cancel enabled once the service said failed.
    const wrong: string[] = [];
    const resultShown = async (): Promise<boolean> => /^Failed: \d/u.test((await card.getByTestId('run-status').textContent()) ?? '');
    await stepUntil(resultShown, Number.POSITIVE_INFINITY, async () => {
      const shown = await card.evaluate((section) => ({ state: section.getAttribute('data-state'), cancel: (section.querySelector('.cancel') as HTMLButtonElement).disabled, failed: section.querySelector('[data-node-id="node-translate-fr"]')?.getAttribute('data-status') }));
      if (shown.failed === 'failed' && (shown.state === 'running' || !shown.cancel)) wrong.push(JSON.stringify(shown));
    });
    await expect(card.getAttribute('data-state')).resolves.toBe('failed');
    expect(wrong).toEqual([]);
    await expect(card.getByRole('button', { name: 'Cancel' }).isDisabled()).resolves.toBe(true);
    const progress = card.getByTestId('progress');
    await expect(progress.getAttribute('data-failed')).resolves.toBe('1');
    const widths = await progress.evaluate((bar) => [...bar.children].map((part) => Number.parseFloat((part as HTMLElement).style.width)));
    // Not a full bar: the failed part apart, and what never ran left empty.
    expect(widths[1]).toBeGreaterThan(0);
    expect(widths[0]! + widths[1]!).toBeLessThan(100);
    expect((await shownNodes(page)).find((node) => node.id === 'node-merge')?.status).not.toBe('finish');
    await expect(card.getByTestId('files').isHidden()).resolves.toBe(true);
  }, 20_000);

  it('reconnects after the relay drops its connections and resumes without repeating', async () => {
    const streams: string[] = [];
    page.on('request', (request) => { if (request.url().includes('/events')) streams.push(request.url()); });
    const { card, executionId } = await run('Research brief (linear chain)');
    // Mid-run: the research done (6 s) and the run not yet (15 s). A step may jump to the server's next
    // read, so the clock stops short of the run's end: the drop must come while the stream is live.
    const createdAt = emulator!.executions.get(executionId)!.createdAt;
    await stepUntil(() => card.locator('[data-testid="node"][data-node-id="node-research"][data-status="finish"]').isVisible(), createdAt + 14_000);
    await expect(card.getAttribute('data-state')).resolves.not.toBe('finish');
    expect(streams).toHaveLength(1);
    dashboard!.dropRelayConnections();
    // Time stands still until the page has connected again (after the relay's retry delay), then it follows the run to its end.
    await expect.poll(() => streams.length, { timeout: WAIT_MS }).toBeGreaterThanOrEqual(2);
    await stepUntil('[data-testid="run"][data-state="finish"]');
    expect(streams.every((url) => url.includes(`/executions/${executionId}/events`))).toBe(true);
    await expect(card.getByTestId('progress').getAttribute('data-succeeded')).resolves.toBe('3');
    // Each node's text exactly once: the resume after the drop repeated nothing and missed nothing.
    const texts = await card.getByTestId('node-text').evaluateAll((blocks) => blocks.map((block) => [block.getAttribute('data-node-id'), block.querySelector('.node-text')?.textContent ?? '']));
    expect(texts).toEqual([
      ['node-research', 'Found three recent sources on the topic.\n\nThe sources agree on the main trend.'],
      ['node-outline', '1. Context\n2. Findings\n3. Outlook'],
      ['node-write', 'The brief: the trend is real and growing.'],
    ]);
  }, 20_000);

  it('cancels with a cancel token: cancelling until the service confirms, then aborted with the nodes’ real ends, one abort', async () => {
    const started = page.waitForResponse((response) => response.url().endsWith('/flowstream/runs'));
    const { card, executionId } = await run('Long-running analysis (times out)');
    const { token: readToken } = (await (await started).json()) as { token: string };
    await stepUntil(() => card.locator('[data-testid="node"][data-node-id="node-analysis"][data-status="executing"]').isVisible());
    // The token the start handed the page may watch the run, not cancel it.
    const withReadToken = await page.evaluate(async ([relay, id, token]) => (await fetch(`${relay}/executions/${id}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })).status, [dashboard!.relay, executionId, readToken] as const);
    expect(withReadToken).toBe(403);
    // And the app mints a cancel token only for the run that read token is for.
    const otherRun = await page.evaluate(async (token) => (await fetch('/app/cancel-token', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ executionId: 'we-another' }) })).status, readToken);
    expect(otherRun).toBe(403);
    expect(emulator!.requests.list({ endpoint: 'abort', executionId })).toEqual([]);
    await card.getByRole('button', { name: 'Cancel' }).click();
    // Time stands still: the card says cancelling, Cancel is off, and the node is still shown at work.
    await card.and(page.locator('[data-state="cancelling"]')).waitFor();
    await expect(card.getByTestId('run-status').textContent()).resolves.toMatch(/^Cancelling…/u);
    await expect(card.getByRole('button', { name: 'Cancel' }).isDisabled()).resolves.toBe(true);
    await stepUntil(() => emulator!.requests.list({ endpoint: 'abort', executionId }).length === 1);
    await stepUntil('[data-testid="run"][data-state="aborted"]');
    await expect(card.getByTestId('run-status').textContent()).resolves.toMatch(/^Aborted: 0 of 1 node\(s\) succeeded, 1 failed/u);
    expect(await shownNodes(page)).toEqual([{ id: 'node-analysis', status: 'failed' }]);
    expect(emulator!.requests.list({ endpoint: 'abort', executionId })).toHaveLength(1);
    expect(emulator!.executions.get(executionId)?.nodes.find((node) => node.nodeId === 'node-analysis')?.errorMessage).toBe('Workflow aborted by user');
    await expect(page.getByTestId('error').textContent()).resolves.toBe('');
  }, 20_000);
});
