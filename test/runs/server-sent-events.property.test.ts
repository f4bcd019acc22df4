import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ServerSentEvents, type ServerSentItem } from '../../src/runs/connect-run.js';

function readAll(chunks: readonly string[]): ServerSentItem[] {
  const reader = new ServerSentEvents();
  return chunks.flatMap((chunk) => reader.push(chunk));
}

/** `text` cut at `cuts` (positions, any order, repeats allowed). */
function cut(text: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((point) => point % (text.length + 1)))].sort((a, b) => a - b);
  return [0, ...points].map((from, index) => text.slice(from, points[index] ?? text.length));
}

const field = fc.stringMatching(/^[a-z0-9 {}":,]{0,12}$/u);
const frame = fc.record({ event: fc.option(fc.constantFrom('status', 'node', 'message')), id: fc.option(fc.stringMatching(/^\d{1,4}$/u)), data: fc.array(field, { minLength: 1, maxLength: 3 }) });
const lineEnd = fc.constantFrom('\n', '\r', '\r\n');

describe('ServerSentEvents', () => {
  it('reads events, ids, multi-line data, comments and retry, whatever the line ends', () => {
    expect(readAll([': hello\r\nretry: 2000\n\nevent: status\rid: 3\rdata: {"a":1}\r\rdata: one\ndata:two\n\nevent: empty\n\n'])).toEqual([
      { kind: 'retry', retryMs: 2000 },
      { kind: 'message', message: { event: 'status', id: '3', data: '{"a":1}' } },
      { kind: 'message', message: { event: 'message', data: 'one\ntwo' } },
    ]);
  });

  it('gives the same items however the stream is cut into chunks, a CRLF cut in two included (property)', () => {
    fc.assert(
      fc.property(fc.array(frame, { maxLength: 6 }), lineEnd, fc.array(fc.nat(), { maxLength: 12 }), (frames, end, cuts) => {
        const text = frames
          .map((one) => [...(one.event === null ? [] : [`event: ${one.event}`]), ...(one.id === null ? [] : [`id: ${one.id}`]), ...one.data.map((data) => `data: ${data}`), ''].join(end) + end)
          .join('');
        const whole = readAll([text]);
        expect(readAll(cut(text, cuts))).toEqual(whole);
        expect(whole).toEqual(
          frames.map((one) => ({ kind: 'message', message: { event: one.event ?? 'message', data: one.data.join('\n'), ...(one.id === null ? {} : { id: one.id }) } })),
        );
      }),
    );
  });
});
