import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isInvalidArgumentError } from '../../src/errors/validation-errors.js';
import { pathSegment } from '../../src/errors/validation-errors.js';

describe('pathSegment', () => {
  it('property: an accepted id stays one segment that URL resolution cannot move', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (id) => {
        let segment: string;
        try {
          segment = pathSegment('id', id);
        } catch (error) {
          expect(isInvalidArgumentError(error)).toBe(true);
          return;
        }
        const url = new URL(`http://127.0.0.1/v1/openapi/workflow/${segment}/status`);
        expect(url.pathname).toBe(`/v1/openapi/workflow/${segment}/status`);
        expect(decodeURIComponent(segment)).toBe(id);
      }),
      { numRuns: 500 },
    );
  });

  it.each(['..', '.', '', ' ', ' we-1', 'we-1 ', 'a\u0000b', 'x'.repeat(257)])('refuses %j', (id) => {
    expect(() => pathSegment('executionId', id)).toThrow(/Invalid executionId/);
  });
});
