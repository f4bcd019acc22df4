import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/domain/model.js';
import type { MessageEvent, NodeEvent, RunEvent } from '../../src/runs/events.js';
import { announceHeldFiles, diffOutput, diffStatus, type ExecutionView, initialView, messageKey, nodeRank, readResult, runResultOf, sameFile } from '../../src/runs/execution-view.js';
import { type PartialOutputMode, type Reading, readings, scenarioArb } from './execution-model.js';
import { EXECUTION_ID } from './fixtures.js';

function replay(all: readonly Reading[]): { events: RunEvent[]; view: ExecutionView; result: RunResult } {
  let view = initialView(EXECUTION_ID, 'executing');
  const events: RunEvent[] = [];
  for (const reading of all) {
    // A streaming run may read the output alone: its task nodes stand in for the status (service.md §4.2),
    // moved by diffOutput below.
    const status = reading.outputAlone ? { view, events: [] } : diffStatus(view, reading.status);
    view = status.view;
    events.push(...status.events);
    if (reading.readOutput || reading.outputAlone) {
      const output = diffOutput(view, reading.output);
      view = output.view;
      events.push(...output.events);
    }
  }
  // At the end, as pollExecution does: files still waiting for a url are announced with what is known.
  const held = announceHeldFiles(view);
  events.push(...held.events);
  view = held.view;
  const last = view.status === 'finish' ? 'finish' : 'failed';
  return { events, view, result: runResultOf(view, last) };
}

function messagesOf(events: readonly RunEvent[]): Map<string, { content: string; reasoning: string; events: MessageEvent[] }> {
  const texts = new Map<string, { content: string; reasoning: string; events: MessageEvent[] }>();
  for (const event of events) {
    if (event.type !== 'message') continue;
    const key = messageKey(event.nodeId, event.messageId);
    const known = texts.get(key) ?? { content: '', reasoning: '', events: [] };
    const content = event.replaced ? event.delta : known.content + event.delta;
    const reasoning = event.replaced ? event.reasoningDelta : known.reasoning + event.reasoningDelta;
    texts.set(key, { content, reasoning, events: [...known.events, event] });
  }
  return texts;
}

describe.each<PartialOutputMode>(['service', 'spec'])('snapshot differ, %s partial output', (mode) => {
  it('rebuilds every message from its deltas, each delta agreeing with the full text', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const all = readings(mode, scenario);
        const { events } = replay(all);
        const final = all.at(-1)!.output;
        const texts = messagesOf(events);
        const expected = final.output.flatMap((entry) =>
          entry.messages.map((message) => [messageKey(entry.nodeId, message.messageId), message] as const),
        );
        expect([...texts.keys()].sort()).toEqual(expected.map(([key]) => key).sort());
        for (const [key, message] of expected) {
          const text = texts.get(key)!;
          expect(text.content).toBe(message.content);
          expect(text.reasoning).toBe(message.reasoningContent);
          let content = '';
          for (const event of text.events) {
            content = event.replaced ? event.delta : content + event.delta;
            expect(event.content).toBe(content);
          }
        }
      }),
    );
  });

  it('never emits the same text or fact twice', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const { events } = replay(readings(mode, scenario));
        for (const event of events) {
          if (event.type === 'message' && !event.replaced) expect(event.delta.length + event.reasoningDelta.length).toBeGreaterThan(0);
        }
        const files = events.flatMap((event) => (event.type === 'file' ? [event.file] : []));
        files.forEach((file, index) => {
          expect(files.slice(index + 1).some((later) => sameFile(file, later))).toBe(false);
        });
        const transitions = events.flatMap((event) => (event.type === 'node' ? [`${event.nodeId}:${event.status}`] : []));
        expect(new Set(transitions).size).toBe(transitions.length);
        if (mode === 'service') expect(events.some((event) => event.type === 'message' && event.replaced)).toBe(false);
      }),
    );
  });

  it('emits node events per node in the allowed order, each from the status before', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const { events } = replay(readings(mode, scenario));
        const last = new Map<string, NodeEvent>();
        for (const event of events) {
          if (event.type !== 'node') continue;
          const before = last.get(event.nodeId);
          if (before === undefined) expect(event.previous).toBeUndefined();
          else {
            expect(event.previous).toBe(before.status);
            expect(nodeRank(event.status)).toBeGreaterThan(nodeRank(before.status));
          }
          last.set(event.nodeId, event);
        }
      }),
    );
  });

  it('rebuilds the final result exactly from the events, and the result matches the execution', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const all = readings(mode, scenario);
        const { events, result } = replay(all);
        const final = all.at(-1)!;

        const nodes = new Map<string, NodeEvent>();
        for (const event of events) if (event.type === 'node') nodes.set(event.nodeId, event);
        expect([...nodes.values()].map((event) => [event.nodeId, event.status, event.title])).toEqual(
          result.nodes.map((entry) => [entry.nodeId, entry.status, entry.title]),
        );
        expect(result.nodes.map((entry) => [entry.nodeId, entry.status])).toEqual(final.status.nodes.map((entry) => [entry.nodeId, entry.status]));

        const texts = messagesOf(events);
        for (const entry of result.output) {
          for (const message of entry.messages) expect(texts.get(messageKey(entry.nodeId, message.messageId))?.content).toBe(message.content);
        }
        expect(result.output.map((entry) => entry.messages)).toEqual(final.output.output.map((entry) => entry.messages));

        const files = events.flatMap((event) => (event.type === 'file' ? [event.file] : []));
        expect(result.files).toEqual(files);
        expect([...result.files].sort((a, b) => a.name.localeCompare(b.name))).toEqual(
          [...final.output.files].sort((a, b) => a.name.localeCompare(b.name)),
        );
        expect(result.failedNodes.map((entry) => entry.nodeId)).toEqual(
          final.status.nodes.filter((entry) => entry.status === 'failed').map((entry) => entry.nodeId),
        );
      }),
    );
  });

  it('emits nothing when the same readings come again', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const all = readings(mode, scenario);
        const { view } = replay(all);
        const final = all.at(-1)!;
        expect(diffStatus(view, final.status).events).toEqual([]);
        expect(diffOutput(view, final.output).events).toEqual([]);
      }),
    );
  });
});

describe('readResult: an ended execution read apart from any run', () => {
  it('is undefined while the execution goes on; once it ended, says what its last status and output answers say', () => {
    fc.assert(
      fc.property(scenarioArb, fc.constantFrom<PartialOutputMode>('service', 'spec'), (scenario, mode) => {
        for (const { status, output } of readings(mode, scenario)) {
          const result = readResult(status, output);
          if (status.status !== 'finish' && status.status !== 'failed') {
            expect(result).toBeUndefined();
            continue;
          }
          expect(result).toMatchObject({ executionId: status.executionId, status: status.status, endedBy: status.status });
          expect(result?.nodes.map((node) => node.nodeId).sort()).toEqual([...new Set([...status.nodes, ...output.output].map((node) => node.nodeId))].sort());
          expect(result?.failedNodes.every((node) => node.status === 'failed')).toBe(true);
          expect(result?.output.map((node) => [node.nodeId, node.messages.map((message) => message.content)])).toEqual(output.output.map((node) => [node.nodeId, node.messages.map((message) => message.content)]));
        }
      }),
    );
  });
});
