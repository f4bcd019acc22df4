import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createEmulator } from '../../src/emulator/index.js';
import { runPiped as piped } from './support/piped-cli.js';

describe('flowstream run --timeout', () => {
  it('flowstream run refuses a --timeout longer than a timer can wait as a usage error naming --timeout, starting nothing', async () => {
    const emulator = await createEmulator({ listen: false });
    try {
      const cli = await piped(['run', 'c-sample-linear', '--timeout', '1e9'], { FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url });
      expect(cli.code).toBe(2);
      expect(cli.stderr).toContain("option '--timeout <seconds>' argument '1e9' is invalid");
      expect(emulator.requests.list()).toEqual([]);
    } finally {
      await emulator.close();
    }
  });
});

describe('flowstream emulator --port', () => {
  it('refuses a port above 65535 as a usage error naming --port', async () => {
    const cli = await piped(['emulator', '--port', '99999'], {});
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain("option '--port <port>' argument '99999' is invalid");
  });

  it('says a port in use is in use, as a usage error (exit 2), not as a failed workflow (exit 1)', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as AddressInfo;
      const cli = await piped(['emulator', '--port', String(port)], {});
      expect(cli.code).toBe(2);
      expect(cli.stderr).toContain(`port ${port} on 127.0.0.1 is in use`);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => { resolve(); }));
    }
  });
});
