import { afterEach } from 'vitest';
import { type Client, createClient } from '../../src/client.js';
import { createEmulator, type Emulator, type NodeDefinition, type WorkflowDefinition } from '../../src/emulator/index.js';
import { REQUEST_TIMEOUT_MS } from '../support/request-timeout.js';

/** Emulator ms per real ms: a 1.5 s status tick takes 15 ms, the rate-limit minute 600 ms. */
export const SPEED = 100;

const open: Emulator[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((emulator) => emulator.close()));
});

/**
 * An emulator over loopback with its real rate limit (unless `rateLimit: false`), and a client whose
 * budget runs on the emulator's clock, so its minute is the emulator's minute.
 */
export async function setup(workflows: readonly WorkflowDefinition[] = [], options: { readonly rateLimit?: false } = {}): Promise<{ emulator: Emulator; client: Client }> {
  const emulator = await createEmulator({ speed: SPEED, workflows: [...workflows], ...(options.rateLimit === false ? { rateLimit: false } : {}) });
  open.push(emulator);
  return { emulator, client: clientOf(emulator) };
}

/** A client of the emulator over loopback (or through `fetch`), on the emulator's clock, polling every 1–4 s of emulator time. */
export function clientOf(emulator: Emulator, fetch?: typeof globalThis.fetch): Client {
  return createClient({
    apiKey: emulator.apiKey,
    baseUrl: emulator.url,
    polling: { minMs: 1_000, maxMs: 4_000 },
    timeoutMs: REQUEST_TIMEOUT_MS,
    scheduler: emulator.scheduler,
    ...(fetch === undefined ? {} : { fetch }),
  });
}

/** A workflow of one task node, `node-task`, after a start node. */
export function task(canvasId: string, node: Omit<NodeDefinition, 'id' | 'parents'> = {}): WorkflowDefinition {
  return { canvasId, title: canvasId, nodes: [{ id: 'node-start', type: 'start' }, { id: 'node-task', parents: ['node-start'], ...node }] };
}

/** The emulator's executions of one canvas, oldest first. */
export function executionsOf(emulator: Emulator, canvasId: string) {
  return emulator.executions.list().filter((execution) => execution.canvasId === canvasId);
}
