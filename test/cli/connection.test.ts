import { describe, expect, it } from 'vitest';
import { resolveConnection } from '../../src/cli/connection.js';
import { UsageError } from '../../src/cli/usage-error.js';

const env = { FLOWSTREAM_API_KEY: 'rf_env', FLOWSTREAM_BASE_URL: 'http://127.0.0.1:1/v1' };

describe('resolveConnection', () => {
  it('reads FLOWSTREAM_API_KEY and FLOWSTREAM_BASE_URL', () => {
    expect(resolveConnection({}, env)).toEqual({ apiKey: 'rf_env', baseUrl: 'http://127.0.0.1:1/v1' });
  });

  it('lets --api-key and --base-url override the environment', () => {
    expect(resolveConnection({ apiKey: 'rf_flag', baseUrl: 'http://127.0.0.1:2/v1' }, env)).toEqual({ apiKey: 'rf_flag', baseUrl: 'http://127.0.0.1:2/v1' });
  });

  it('takes blank values for missing ones', () => {
    expect(() => resolveConnection({ apiKey: ' ' }, { ...env, FLOWSTREAM_API_KEY: '' })).toThrow(/No API key/u);
  });

  it('names every missing setting and how to get both locally', () => {
    const attempt = (): unknown => resolveConnection({}, {});
    expect(attempt).toThrow(UsageError);
    expect(attempt).toThrow(/FLOWSTREAM_API_KEY[\s\S]*FLOWSTREAM_BASE_URL[\s\S]*flowstream emulator/u);
  });

  it('refuses an address that is not a URL', () => {
    expect(() => resolveConnection({ baseUrl: 'localhost v1' }, env)).toThrow(/is not a URL/u);
  });
});
