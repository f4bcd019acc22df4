import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NodeDefinition } from '../../src/emulator/index.js';
import { drawnWorkflow } from '../../src/emulator/engine/drawn-workflow.js';
import { parseWorkflowDefinition } from '../../src/emulator/workflows/parse-definition.js';

/** A task node with a varying duration, messages at sorted fractions of it and maybe a failure. */
const nodeArbitrary: fc.Arbitrary<NodeDefinition> = fc
  .record({
    durationMs: fc.integer({ min: 0, max: 40 * 60_000 }),
    durationCv: fc.double({ min: 0, max: 3, noNaN: true }),
    fractions: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 }),
    failAt: fc.option(fc.double({ min: 0, max: 1, noNaN: true })),
  })
  .map(({ durationMs, durationCv, fractions, failAt }) => ({
    id: 'node-work',
    durationMs,
    durationCv,
    messages: fractions.sort((a, b) => a - b).map((fraction, index) => ({ content: `m${String(index)}`, atMs: Math.floor(fraction * durationMs) })),
    ...(failAt === null ? {} : { failure: { kind: 'error' as const, atMs: Math.floor(failAt * durationMs) } }),
  }));

describe('the workflow as one execution runs it', () => {
  it('keeps every message and failure within the drawn duration, in their order', () => {
    fc.assert(
      fc.property(nodeArbitrary, fc.nat({ max: 10_000 }), (definition, ordinal) => {
        const workflow = parseWorkflowDefinition({ canvasId: 'c-drawn', nodes: [{ id: 'node-start', type: 'start' }, { ...definition, parents: ['node-start'] }] });
        const drawn = drawnWorkflow(workflow, ordinal);
        const [start, node] = [drawn.nodes[0], drawn.nodes.find((candidate) => candidate.id === 'node-work')];
        expect(start).toBe(workflow.nodes[0]);
        if (node === undefined) throw new Error('node-work is missing');
        const times = node.messages.map((message) => message.atMs);
        expect(times).toEqual(times.toSorted((a, b) => a - b));
        expect(times.every((atMs) => atMs >= 0 && atMs <= node.durationMs)).toBe(true);
        if (node.failure?.kind === 'error') expect(node.failure.atMs).toBeLessThanOrEqual(node.durationMs);
        expect(node.messages.map((message) => message.content)).toEqual(definition.messages?.map((message) => message.content));
      }),
    );
  });

  it('is the registered workflow itself when no node varies', () => {
    const workflow = parseWorkflowDefinition({ nodes: [{ id: 'node-a', durationMs: 1_000, messages: [{ content: 'x' }] }] });
    expect(drawnWorkflow(workflow, 7)).toBe(workflow);
  });
});
