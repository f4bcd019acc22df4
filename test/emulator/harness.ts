import { afterEach } from 'vitest';
import { createEmulator } from '../../src/emulator/index.js';
import type { Emulator, EmulatorOptions } from '../../src/emulator/index.js';
import type { Answer, RunData } from './wire.js';

const open: Emulator[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
});

/** An emulator closed after the test. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const emulator = await createEmulator(options);
  open.push(emulator);
  return emulator;
}

/** Calls the API with the account's key; `path` is relative to the `/v1` base. */
export async function call(
  emulator: Emulator,
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string>; transport?: 'http' | 'in-process' } = {},
): Promise<Response> {
  const headers: Record<string, string> = { Authorization: `Bearer ${emulator.apiKey}`, ...init.headers };
  let body: string | FormData | undefined;
  if (init.body instanceof FormData) body = init.body;
  else if (typeof init.body === 'string') body = init.body;
  else if (init.body !== undefined) body = JSON.stringify(init.body);
  if (typeof body === 'string') headers['Content-Type'] ??= 'application/json';
  const transport = init.transport === 'in-process' ? emulator.fetch : fetch;
  return transport(`${emulator.url}${path}`, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, ...(body === undefined ? {} : { body }) });
}

/** Calls the API and parses the JSON answer, typed as the test expects it. */
export async function callJson<T = unknown>(
  emulator: Emulator,
  path: string,
  init: Parameters<typeof call>[2] = {},
): Promise<{ status: number; body: Answer<T>; headers: Headers }> {
  const response = await call(emulator, path, init);
  return { status: response.status, body: (await response.json()) as Answer<T>, headers: response.headers };
}

/** Starts a run and returns its execution id. */
export async function run(emulator: Emulator, canvasId: string, body: unknown = {}): Promise<string> {
  const { body: answer } = await callJson<RunData>(emulator, `/openapi/workflow/${canvasId}/run`, { body });
  if (answer.data === undefined) throw new Error(`run failed: ${JSON.stringify(answer)}`);
  return answer.data.executionId;
}

/** Polls `probe` until `done` holds, at most `timeoutMs` of real time: for the accelerated clock. */
export async function pollUntil<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${String(timeoutMs)} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
