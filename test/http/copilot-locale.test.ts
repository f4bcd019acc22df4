import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import type { CopilotLocale, GenerateRequest } from '../../src/http/resources.js';
import { clientFor } from './support/client.js';

/** A fetch answering every copilot call with a generated workflow, keeping the bodies it was sent. */
function generating(): { fetch: typeof globalThis.fetch; sent: unknown[] } {
  const sent: unknown[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    sent.push(await new Request(input, init).json());
    return Response.json({ success: true, data: { canvasId: 'c-2', workflowPlan: { title: 'T', tasks: [] } } });
  };
  return { fetch, sent };
}

describe('copilot locales (spec §4.8)', () => {
  it('sends a locale the spec does not list, as given, with one logger warning and no error', async () => {
    const { fetch, sent } = generating();
    const logger = { warn: vi.fn<(message: string, meta?: Readonly<Record<string, unknown>>) => void>() };
    const client = clientFor('http://127.0.0.1:9', { fetch, logger });
    await expect(client.copilot.generate({ query: 'Answer in Chinese', locale: 'zh-Hans' })).resolves.toMatchObject({ canvasId: 'c-2' });
    await client.copilot.generate({ query: 'Again', locale: 'zh-Hans' });
    await client.copilot.generate({ query: 'Documented', locale: 'zh-CN' });
    expect(sent).toEqual([
      { query: 'Answer in Chinese', locale: 'zh-Hans' },
      { query: 'Again', locale: 'zh-Hans' },
      { query: 'Documented', locale: 'zh-CN' },
    ]);
    expect(logger.warn).toHaveBeenCalledOnce();
    expect(logger.warn.mock.calls[0]).toEqual([expect.stringContaining('zh-Hans'), { locale: 'zh-Hans' }]);
  });

  it('types the documented locales as hints while accepting any string', () => {
    expectTypeOf<'zh-Hans'>().toExtend<CopilotLocale>();
    expectTypeOf<GenerateRequest['locale']>().toEqualTypeOf<CopilotLocale | undefined>();
  });
});
