import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { detectionLatencies, type SeenTransitions } from '../../src/otel/detection-latency.js';

const iso = (ms: number): string => new Date(ms).toISOString();
const EPOCH = Date.UTC(2026, 0, 1);

describe('detectionLatencies: from the service times of a node to the read that saw it', () => {
  it('measures a start and an end seen after the service reported them', () => {
    const seen = new Map<string, SeenTransitions>([['node-a', { startedAt: EPOCH + 1_700, endedAt: EPOCH + 5_500 }]]);
    expect(detectionLatencies(seen, [{ nodeId: 'node-a', startTime: iso(EPOCH + 1_500), endTime: iso(EPOCH + 5_000) }])).toEqual([
      { nodeId: 'node-a', transition: 'start', ms: 200 },
      { nodeId: 'node-a', transition: 'end', ms: 500 },
    ]);
  });

  it('leaves out what it cannot judge: a node not seen, a time the service did not give or that does not parse, a sighting before the report', () => {
    const seen = new Map<string, SeenTransitions>([
      ['node-a', { startedAt: EPOCH + 1_000 }],
      ['node-b', { endedAt: EPOCH + 2_000 }],
      ['node-c', { startedAt: EPOCH, endedAt: EPOCH + 100 }],
    ]);
    const output = [
      { nodeId: 'node-a', endTime: iso(EPOCH + 900) },
      { nodeId: 'node-b', startTime: iso(EPOCH), endTime: 'not a time' },
      { nodeId: 'node-c', startTime: iso(EPOCH + 50), endTime: iso(EPOCH + 100) },
      { nodeId: 'node-d', startTime: iso(EPOCH), endTime: iso(EPOCH + 10) },
    ];
    expect(detectionLatencies(seen, output)).toEqual([{ nodeId: 'node-c', transition: 'end', ms: 0 }]);
  });

  it('property: every latency is seen − reported, never negative, at most one per node and transition', () => {
    const times = fc.option(fc.integer({ min: 0, max: 3_600_000 }), { nil: undefined });
    const node = fc.record({ reportedStart: times, reportedEnd: times, seenStart: times, seenEnd: times });
    fc.assert(
      fc.property(fc.array(node, { maxLength: 8 }), (nodes) => {
        const seen = new Map<string, SeenTransitions>(
          nodes.map((n, index) => [`node-${index}`, { ...(n.seenStart === undefined ? {} : { startedAt: EPOCH + n.seenStart }), ...(n.seenEnd === undefined ? {} : { endedAt: EPOCH + n.seenEnd }) }]),
        );
        const output = nodes.map((n, index) => ({
          nodeId: `node-${index}`,
          ...(n.reportedStart === undefined ? {} : { startTime: iso(EPOCH + n.reportedStart) }),
          ...(n.reportedEnd === undefined ? {} : { endTime: iso(EPOCH + n.reportedEnd) }),
        }));
        const latencies = detectionLatencies(seen, output);
        const keys = latencies.map((latency) => `${latency.nodeId}/${latency.transition}`);
        expect(new Set(keys).size).toBe(keys.length);
        for (const latency of latencies) {
          const n = nodes[Number(latency.nodeId.slice('node-'.length))]!;
          const [seenAt, reportedAt] = latency.transition === 'start' ? [n.seenStart, n.reportedStart] : [n.seenEnd, n.reportedEnd];
          expect(latency.ms).toBe(seenAt! - reportedAt!);
          expect(latency.ms).toBeGreaterThanOrEqual(0);
        }
        // Every pair that can be judged is.
        const judgeable = nodes.flatMap((n) => [[n.seenStart, n.reportedStart], [n.seenEnd, n.reportedEnd]]).filter(([s, r]) => s !== undefined && r !== undefined && s >= r);
        expect(latencies).toHaveLength(judgeable.length);
      }),
    );
  });
});
