import { describe, expect, expectTypeOf, it } from 'vitest';
import * as flowstream from '../../src/index.js';

describe('the runs layer for apps and UIs is public', () => {
  it('exports the new helpers and the error guard by name', () => {
    expect(typeof flowstream.sampleRunState).toBe('function');
    expect(typeof flowstream.runStore).toBe('function');
    expect(typeof flowstream.createRunLimiter).toBe('function');
    expect(flowstream.isConcurrencyLimitError(new flowstream.ConcurrencyLimitError('k', 1))).toBe(true);
  });

  it('puts startRun on the client, with its types', () => {
    const client = flowstream.createClient({ apiKey: 'rf_00000000000000000000000000000000', baseUrl: 'http://127.0.0.1:1/v1', budget: false });
    expect(typeof client.startRun).toBe('function');
    expectTypeOf<ReturnType<flowstream.Client['startRun']>>().toEqualTypeOf<flowstream.RunHandle>();
    expectTypeOf<flowstream.RunResult['endedBy']>().toEqualTypeOf<flowstream.RunEnding>();
    expectTypeOf<flowstream.StartRunOptions>().toHaveProperty('sampleStateMs');
  });
});
