import { createElement } from 'react';
import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { RunCard } from '../../examples/react/run-card.js';
import { createClient } from '../../src/client.js';
import { createEmulator } from '../../src/emulator/index.js';
import { type RunState, runStore } from '../../src/runs/run-state.js';

// React's useSyncExternalStore takes runStore as it is (examples/react/run-card.tsx), rendered here on
// the server renderer, which reads the same snapshot.

describe('examples/react: a run card on runStore', () => {
  it('renders the store before the run, and the finished run with its task nodes and files', async () => {
    const emulator = await createEmulator({ speed: 50, rateLimit: false });
    try {
      const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch });
      const store = runStore(client.run('c-sample-files'));
      expect(renderToString(createElement(RunCard, { store }))).toContain('Starting…');

      const last = await new Promise<RunState>((resolve) => {
        const leave = store.subscribe((state) => {
          if (state?.result !== undefined) {
            queueMicrotask(leave);
            resolve(state);
          }
        });
      });
      expect(store.getSnapshot()).toBe(last);

      const html = renderToString(createElement(RunCard, { store }));
      expect(html).toContain('data-state="finish"');
      expect(html.replace(/<!-- -->/gu, "")).toContain(`${last.progress.total}/${last.progress.total} steps · finish`);
      for (const file of last.files) expect(html).toContain(`>${file.name}</a>`);
      expect(html).not.toContain('node-start');
    } finally {
      await emulator.close();
    }
  });
});
