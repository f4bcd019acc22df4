import { afterEach } from 'vitest';
import { createEmulator, type Emulator, type EmulatorOptions } from '../../../src/emulator/index.js';
import { createHttpClient, type HttpClient } from '../../../src/http/client.js';
import type { HttpOptions as ClientOptions } from '../../../src/http/options.js';
import { FAST_RETRY } from './client.js';

const open: Emulator[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
});

/** An emulator on 127.0.0.1 (closed after the test) and a client of it over real HTTP. */
export async function emulatorWithClient(options: EmulatorOptions = {}, client: Partial<ClientOptions> = {}): Promise<{ emulator: Emulator; client: HttpClient }> {
  const emulator = await createEmulator(options);
  open.push(emulator);
  return { emulator, client: createHttpClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, retry: FAST_RETRY, ...client }) };
}
