import { createElement } from 'react';
import { renderToString } from 'react-dom/server';
import type { Observable } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { useRun, useStartRun } from '../../src/react/index.js';
import type { RunEvent } from '../../src/runs/events.js';

// Rendering on the server (and a first render before hydration) reads a run without starting it: the
// hooks subscribe only in the browser, from an effect. Their live behaviour is proven in Chromium
// (test/browser/react-page.test.ts).

let emulator: Emulator | undefined;
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

async function clientOnEmulator() {
  emulator = await createEmulator({ listen: false, rateLimit: false });
  return createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, budget: false });
}

function Progress({ source }: { readonly source: Observable<RunEvent> | undefined }) {
  const state = useRun(source);
  return createElement('p', null, state === undefined ? 'no reading yet' : `${state.progress.succeeded}/${state.progress.total}`);
}

describe('flowstream/react on the server', () => {
  it('useRun renders no reading for a run on the server, and sends nothing (no execution started)', async () => {
    const client = await clientOnEmulator();
    const run$ = client.run('c-sample-linear');
    expect(renderToString(createElement(Progress, { source: run$ }))).toBe('<p>no reading yet</p>');
    expect(renderToString(createElement(Progress, { source: undefined }))).toBe('<p>no reading yet</p>');
    await new Promise((resolve) => setImmediate(resolve));
    expect(emulator!.requests.list()).toEqual([]);
    expect(emulator!.executions.list()).toEqual([]);
  });

  it('useStartRun starts idle, with no state, execution or error, and sends nothing', async () => {
    const client = await clientOnEmulator();
    let seen: unknown;
    function Starter() {
      const run = useStartRun(client);
      seen = { status: run.status, state: run.state, executionId: run.executionId, error: run.error, start: typeof run.start, cancel: typeof run.cancel };
      return createElement('button', null, run.status);
    }
    expect(renderToString(createElement(Starter))).toBe('<button>idle</button>');
    expect(seen).toEqual({ status: 'idle', state: undefined, executionId: undefined, error: undefined, start: 'function', cancel: 'function' });
    expect(emulator!.requests.list()).toEqual([]);
  });
});
