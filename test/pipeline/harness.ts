import { afterEach } from 'vitest';
import { scaledClock } from '../../src/budget/index.js';
import { type Client, createClient } from '../../src/client.js';
import { createEmulator, type Emulator, type NodeDefinition, type WorkflowDefinition } from '../../src/emulator/index.js';

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
  const client = createClient({
    apiKey: emulator.apiKey,
    baseUrl: emulator.url,
    polling: { minMs: 5, maxMs: 20 },
    budget: { clock: scaledClock(SPEED) },
  });
  return { emulator, client };
}

/** A workflow of one task node, `node-task`, after a start node. */
export function task(canvasId: string, node: Omit<NodeDefinition, 'id' | 'parents'> = {}): WorkflowDefinition {
  return { canvasId, title: canvasId, nodes: [{ id: 'node-start', type: 'start' }, { id: 'node-task', parents: ['node-start'], ...node }] };
}

/** The emulator's executions of one canvas, oldest first. */
export function executionsOf(emulator: Emulator, canvasId: string) {
  return emulator.executions.list().filter((execution) => execution.canvasId === canvasId);
}
