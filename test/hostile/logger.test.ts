import { describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client.js';
import { createEmulator } from '../../src/emulator/index.js';
import { runResult } from '../../src/runs/events.js';

describe('a logger that throws', () => {
  it('does not break a run that warns: the run still reaches its end', async () => {
    const emulator = await createEmulator({ speed: 50, rateLimit: false });
    try {
      const warn = vi.fn(() => {
        throw new Error('the log disk is full');
      });
      const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch, logger: { warn, debug: warn, error: warn } });
      // A text value starting with of_ is read as a fileKey by the service (service.md §5.5): a warning.
      const result = await runResult(client.run('c-sample-parallel', { variables: { note: 'of_course' } }));
      expect(result.status).toBe('finish');
      expect(warn).toHaveBeenCalled();
    } finally {
      await emulator.close();
    }
  });
});
