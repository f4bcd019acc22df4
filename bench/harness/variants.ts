import { mulberry32 } from '../../src/emulator/engine/seeded-random.js';
import type { WorkflowDefinition } from '../../src/emulator/index.js';

/**
 * `definition` with every node duration moved by a seeded random amount within ±`spread(duration)`.
 * Real nodes never take exactly the same time twice, and identical timelines would let runs fall into
 * lockstep with a fixed loop's period or with the budget's round of polls, so that one phase — lucky
 * or not — would decide every latency.
 */
export function variantOf(definition: WorkflowDefinition, seed: number, spread: (durationMs: number) => number, canvasId = definition.canvasId): WorkflowDefinition {
  // Seeded, so that every contender meets the same timelines.
  const random = mulberry32(seed);
  return {
    ...definition,
    ...(canvasId === undefined ? {} : { canvasId }),
    nodes: definition.nodes.map((node) =>
      node.durationMs === undefined ? node : { ...node, durationMs: Math.round(node.durationMs + spread(node.durationMs) * (2 * random() - 1)) },
    ),
  };
}
