import type { WorkflowDefinition } from '../../src/emulator/index.js';

/**
 * `definition` with every node duration moved by a seeded random amount within ±`spread(duration)`.
 * Real nodes never take exactly the same time twice, and identical timelines would let runs fall into
 * lockstep with a fixed loop's period or with the budget's round of polls, so that one phase — lucky
 * or not — would decide every latency.
 */
export function variantOf(definition: WorkflowDefinition, seed: number, spread: (durationMs: number) => number, canvasId = definition.canvasId): WorkflowDefinition {
  const random = seeded(seed);
  return {
    ...definition,
    ...(canvasId === undefined ? {} : { canvasId }),
    nodes: definition.nodes.map((node) =>
      node.durationMs === undefined ? node : { ...node, durationMs: Math.round(node.durationMs + spread(node.durationMs) * (2 * random() - 1)) },
    ),
  };
}

/** mulberry32: a small seeded generator, so that every contender meets the same timelines. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
