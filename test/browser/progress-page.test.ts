import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { bundleProgressPage } from '../../examples/web/bundle.js';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { CHROMIUM_PATH, hasChromium, launchChromium } from './chromium.js';
import { serveFolder, type StaticSite } from '../../examples/web/static-server.js';

/** Where the README's picture comes from; rewritten only on request, so a test run leaves the tree clean. */
const SCREENSHOT = fileURLToPath(new URL('../../docs/progress-page.png', import.meta.url));
const updateScreenshot = (process.env['UPDATE_SCREENSHOT'] ?? '') !== '';
/** Page conditions wait this long at most; the emulator runs 20× faster, so runs take about a second. */
const WAIT_MS = 15_000;

interface ShownNode {
  readonly id: string;
  readonly status: string;
  readonly title: string;
  readonly text: string;
}

/** The nodes as the page shows them, read from its markup. */
function shownNodes(page: Page): Promise<ShownNode[]> {
  return page.getByTestId('node').evaluateAll((items) =>
    items.map((item) => ({
      id: item.getAttribute('data-node-id') ?? '',
      status: item.getAttribute('data-status') ?? '',
      title: item.querySelector('.node-title')?.textContent ?? '',
      text: item.querySelector('.node-text')?.textContent ?? '',
    })),
  );
}

// Never skipped: npm test's pre-step (scripts/system-packages.mjs) installs Chromium where it is missing.
describe('the progress page in Chromium', () => {
  let outdir = '';
  let site: StaticSite | undefined;
  let emulator: Emulator | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let pageErrors: Error[] = [];
  /** The emulator's API request count before the page loads: what the page's one client sends comes after. */
  let requestsBeforePage = 0;
  /** API requests the emulator received: not the browser's CORS preflights, nor file downloads (no API calls). */
  const apiRequests = (): number => emulator!.requests.list().filter((request) => request.method !== 'OPTIONS' && request.path.includes('/openapi/')).length;

  beforeAll(async () => {
    if (!hasChromium()) throw new Error(`${CHROMIUM_PATH} is missing: npm test installs Debian's chromium first (scripts/system-packages.mjs); run it through npm test, or apt-get install -y chromium`);
    outdir = await mkdtemp(join(tmpdir(), 'flowstream-web-'));
    await bundleProgressPage(outdir);
    site = await serveFolder(outdir);
    // The page calls the API itself: the emulator answers its origin (the service would not, service.md §1.7).
    [emulator, browser] = await Promise.all([createEmulator({ speed: 20, cors: { origins: [site.url] } }), launchChromium()]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([browser?.close(), site?.close(), emulator?.close()]);
    if (outdir !== '') await rm(outdir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    pageErrors = [];
    requestsBeforePage = apiRequests();
    page = await browser!.newPage({ viewport: { width: 900, height: 900 } });
    page.setDefaultTimeout(WAIT_MS);
    page.on('pageerror', (error) => pageErrors.push(error));
    const connection = new URLSearchParams({ baseUrl: emulator!.url, apiKey: emulator!.apiKey });
    await page.goto(`${site!.url}/index.html#${connection.toString()}`);
  });

  afterEach(async () => {
    await page.close();
    expect(pageErrors).toEqual([]);
  });

  /** Searches by keyword, picks the workflow by title, and waits for its plan (Run turns enabled). */
  async function pick(keyword: string, title: string): Promise<void> {
    await page.getByLabel('Keyword').fill(keyword);
    await page.getByRole('button', { name: 'Search workflows' }).click();
    await page.getByLabel('Workflow', { exact: true }).selectOption({ label: title });
    await page.locator('#run-button:enabled').waitFor();
  }

  async function runToEnd(): Promise<void> {
    await page.getByRole('button', { name: 'Run' }).click();
    await page.locator('[data-testid="run"][data-state="finish"]').waitFor();
  }

  it('runs a workflow picked from search to the end, showing each node, its text and the files as links', async () => {
    await pick('report', 'Quarterly report with files');
    await runToEnd();

    // The graph shows the work: the task nodes, not the start node.
    expect(await shownNodes(page)).toEqual([
      { id: 'node-report', status: 'finish', title: 'Write the report', text: 'The report is ready.' },
      { id: 'node-chart', status: 'finish', title: 'Draw the chart', text: 'Chart drawn.' },
    ]);
    await expect(page.getByTestId('run-status').textContent()).resolves.toMatch(/^Finished: 2 of 2 nodes done/);
    const links = page.getByTestId('files').getByRole('link');
    expect(await links.allTextContents()).toEqual(['report.md', 'figures.csv', 'chart.png']);
    // An image file is previewed, from its public URL.
    await expect(page.getByTestId('files').getByRole('img', { name: 'chart.png' }).getAttribute('src')).resolves.toContain('/drive/file/public/');
    // The link is the service's public URL: it downloads without the key.
    const report = await fetch((await links.first().getAttribute('href'))!);
    await expect(report.text()).resolves.toContain('# Quarterly report');

  }, 30_000);

  it('fills the variables from the plan, uploads the chosen file and sends them with the run', async () => {
    await pick('newsletter', 'Personalised newsletter (variables)');
    await page.getByLabel('topic (required)').fill('tides');
    await page.getByLabel('tone').selectOption('casual');
    await page.getByLabel('attachment').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('High tide at 6.') });
    await runToEnd();

    const draft = (await shownNodes(page)).find((node) => node.id === 'node-draft');
    expect(draft).toMatchObject({ status: 'finish', title: 'Draft the newsletter', text: 'Here is this week\'s newsletter.' });
    const executionId = (await page.getByTestId('execution-id').textContent()) ?? '';
    expect(emulator!.executions.get(executionId)?.variables).toEqual([
      { name: 'topic', kind: 'text', value: 'tides' },
      { name: 'tone', kind: 'text', value: 'casual' },
      { name: 'attachment', kind: 'files', files: [{ fileKey: expect.stringMatching(/^of_/) as unknown, fileName: 'notes.txt' }] },
    ]);
  }, 30_000);

  it('shows a failed workflow with the failing node and its error, and no transport error', async () => {
    await pick('translation', 'Translation with a failing branch');
    await page.getByRole('button', { name: 'Run' }).click();
    await page.locator('[data-testid="run"][data-state="failed"]').waitFor();

    const nodes = await shownNodes(page);
    expect(nodes.find((node) => node.id === 'node-translate-fr')?.status).toBe('failed');
    expect(nodes.find((node) => node.id === 'node-merge')?.status).toBe('init');
    await expect(page.locator('[data-node-id="node-translate-fr"] .node-error').textContent()).resolves.toBe('Request timeout. Please try again later.');
    await expect(page.getByTestId('run-status').textContent()).resolves.toMatch(/^Failed: 1 node\(s\) failed/);
    await expect(page.getByTestId('error').textContent()).resolves.toBe('');
  }, 30_000);

  it('shows the API refusing a wrong key, instead of a workflow list', async () => {
    await page.getByLabel('API key').fill(`rf_${'x'.repeat(32)}`);
    await page.getByRole('button', { name: 'Search workflows' }).click();
    await page.getByRole('alert').filter({ hasText: /\S/ }).waitFor();

    await expect(page.getByRole('alert').textContent()).resolves.toContain('Authentication failed');
    await expect(page.locator('#workflow').isHidden()).resolves.toBe(true);
  });

  it('aborts the execution once when Cancel is pressed mid-run', async () => {
    await pick('analysis', 'Long-running analysis (times out)');
    await page.getByRole('button', { name: 'Run' }).click();
    await page.locator('[data-node-id="node-analysis"][data-status="executing"]').waitFor();
    const executionId = (await page.getByTestId('execution-id').textContent()) ?? '';
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.locator('[data-testid="run"][data-state="aborted"]').waitFor();

    // The abort leaves the page without blocking it; the emulator's log shows when it arrived.
    await vi.waitFor(() => { expect(emulator!.requests.list({ endpoint: 'abort', executionId })).toHaveLength(1); }, { timeout: WAIT_MS });
    const execution = emulator!.executions.get(executionId);
    expect(execution?.status).toBe('failed');
    expect(execution?.nodes.find((node) => node.nodeId === 'node-analysis')?.errorMessage).toBe('Workflow aborted by user');
    await expect(page.getByRole('button', { name: 'Run' }).isEnabled()).resolves.toBe(true);
  }, 30_000);

  it('runs two workflows at once as cards with their graphs laid out by dependencies, cancels one (aborted once), and meters the budget', async () => {
    // Listed on load: the link's fragment carries the connection.
    await page.getByLabel('Workflow', { exact: true }).locator('option').first().waitFor({ state: 'attached' });
    await pick('analysis', 'Long-running analysis (times out)');
    await page.getByRole('button', { name: 'Run' }).click();
    await pick('report', 'Quarterly report with files');
    await page.getByRole('button', { name: 'Run' }).click();

    const cards = page.getByTestId('run');
    await expect(cards.count()).resolves.toBe(2);
    // The newest card is first: the report; the analysis below it.
    const analysis = cards.nth(1);
    await analysis.locator('[data-node-id="node-analysis"][data-status="executing"]').waitFor();
    const executionId = (await analysis.getAttribute('data-execution-id')) ?? '';
    await analysis.getByRole('button', { name: 'Cancel' }).click();
    await page.locator(`[data-testid="run"][data-execution-id="${executionId}"][data-state="aborted"]`).waitFor();
    await cards.nth(0).and(page.locator('[data-state="finish"]')).waitFor();

    // The report's graph: the chart depends on the report, so it stands one column further.
    const report = cards.nth(0);
    await expect(report.locator('[data-node-id="node-report"]').getAttribute('data-column')).resolves.toBe('0');
    await expect(report.locator('[data-node-id="node-chart"]').getAttribute('data-column')).resolves.toBe('1');
    await expect(report.locator('[data-testid="node"][data-status="finish"]').count()).resolves.toBe(2);

    await vi.waitFor(() => { expect(emulator!.requests.list({ endpoint: 'abort', executionId })).toHaveLength(1); }, { timeout: WAIT_MS });
    expect(emulator!.executions.get(executionId)?.status).toBe('failed');

    // The budget meter shows what the client's budget counted: every request of both runs and the page.
    const meter = page.getByTestId('budget');
    await expect(meter.isVisible()).resolves.toBe(true);
    // One client for the page (the connection did not change), so one budget counted every request.
    await vi.waitFor(async () => { expect(Number(await meter.getAttribute('data-used-minute'))).toBe(apiRequests() - requestsBeforePage); }, { timeout: WAIT_MS });
    const used = Number(await meter.getAttribute('data-used-minute'));
    const left = Number(await meter.getAttribute('data-remaining-minute'));
    expect(used).toBeGreaterThan(10);
    expect(used + left).toBe(100);
    expect(Number(await meter.getAttribute('data-used-day'))).toBeGreaterThanOrEqual(used);
    await expect(page.getByTestId('error').textContent()).resolves.toBe('');

    const picture = await page.screenshot({ fullPage: true, ...(updateScreenshot ? { path: SCREENSHOT } : {}) });
    expect(picture.length).toBeGreaterThan(0);
  }, 30_000);
});
