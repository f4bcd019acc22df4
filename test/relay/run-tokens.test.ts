import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clockScheduler, createManualClock } from '../../src/emulator/index.js';
import { isInvalidArgumentError } from '../../src/errors/validation-errors.js';
import { isRunTokenError, type RunTokenProblem } from '../../src/relay/run-token-error.js';
import { createRunTokens, equalInConstantTime } from '../../src/relay/run-tokens.js';

/** Every character a token is written in. */
const ALPHABET = Array.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.');

const SECRET = 'a relay secret of at least thirty-two bytes';

function tokensOnClock(): { tokens: ReturnType<typeof createRunTokens>; clock: ReturnType<typeof createManualClock> } {
  const clock = createManualClock();
  return { tokens: createRunTokens({ secret: SECRET, scheduler: clockScheduler(clock) }), clock };
}

async function refusal(promise: Promise<unknown>): Promise<RunTokenProblem | 'accepted' | 'other'> {
  try {
    await promise;
    return 'accepted';
  } catch (error) {
    return isRunTokenError(error) ? error.problem : 'other';
  }
}

describe('createRunTokens', () => {
  it('verifies its own token for the execution and scope it was signed for, with its claims', async () => {
    const { tokens, clock } = tokensOnClock();
    const token = await tokens.sign({ executionId: 'we-1', scope: ['read', 'cancel'], ttlMs: 60_000 });
    await expect(tokens.verify(token, { executionId: 'we-1', scope: 'read' })).resolves.toEqual({ executionId: 'we-1', scope: ['read', 'cancel'], expiresAt: clock.now() + 60_000 });
    await expect(tokens.verify(token, { executionId: 'we-1', scope: 'cancel' })).resolves.toBeDefined();
  });

  it('refuses a read-only token for cancel, and any token for another execution', async () => {
    const { tokens } = tokensOnClock();
    const token = await tokens.sign({ executionId: 'we-1', scope: ['read'], ttlMs: 60_000 });
    expect(await refusal(tokens.verify(token, { executionId: 'we-1', scope: 'cancel' }))).toBe('scope');
    expect(await refusal(tokens.verify(token, { executionId: 'we-2', scope: 'read' }))).toBe('execution');
  });

  it('refuses a token once its ttl has passed on the clock it was given', async () => {
    const { tokens, clock } = tokensOnClock();
    const token = await tokens.sign({ executionId: 'we-1', scope: ['read'], ttlMs: 1_000 });
    clock.advance(999);
    expect(await refusal(tokens.verify(token, { executionId: 'we-1', scope: 'read' }))).toBe('accepted');
    clock.advance(1);
    expect(await refusal(tokens.verify(token, { executionId: 'we-1', scope: 'read' }))).toBe('expired');
  });

  it('refuses a token signed with another secret, and one whose claims were rewritten', async () => {
    const { tokens } = tokensOnClock();
    const other = createRunTokens({ secret: `${SECRET}, but another` });
    const foreign = await other.sign({ executionId: 'we-1', scope: ['read', 'cancel'], ttlMs: 60_000 });
    expect(await refusal(tokens.verify(foreign, { executionId: 'we-1', scope: 'read' }))).toBe('signature');
    const own = await tokens.sign({ executionId: 'we-1', scope: ['read'], ttlMs: 60_000 });
    const [prefix, , signature] = own.split('.');
    const widened = btoa(JSON.stringify({ e: 'we-1', s: ['read', 'cancel'], x: Number.MAX_SAFE_INTEGER })).replaceAll('=', '');
    expect(await refusal(tokens.verify(`${prefix}.${widened}.${signature}`, { executionId: 'we-1', scope: 'cancel' }))).toBe('signature');
  });

  it('refuses anything that is not a token as malformed', async () => {
    const { tokens } = tokensOnClock();
    for (const token of ['', 'abc', 'v1.a.b.c', 'v2.e30.AAAA', 'v1.e30.not base64!']) {
      expect(await refusal(tokens.verify(token, { executionId: 'we-1', scope: 'read' })), token).toBe('malformed');
    }
  });

  it('holds only the execution id, the scope and the expiry: no secret', async () => {
    const { tokens } = tokensOnClock();
    const token = await tokens.sign({ executionId: 'we-1', scope: ['read'], ttlMs: 1_000 });
    const claims = JSON.parse(atob(token.split('.')[1]!.replaceAll('-', '+').replaceAll('_', '/'))) as Record<string, unknown>;
    expect(Object.keys(claims).sort()).toEqual(['e', 's', 'x']);
    expect(token).not.toContain(btoa(SECRET).slice(0, 12));
  });

  it('refuses a short secret and bad sign requests with InvalidArgumentError', async () => {
    expect(() => createRunTokens({ secret: 'short' })).toThrow(/secret/u);
    expect(() => createRunTokens(undefined as never)).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument: 'options' }));
    const { tokens } = tokensOnClock();
    for (const request of [
      undefined,
      null,
      { executionId: '', scope: ['read'], ttlMs: 1 },
      // Ids no execution can have, which the relay could not follow (its client refuses them).
      { executionId: '..', scope: ['read'], ttlMs: 1 },
      { executionId: ' we-1', scope: ['read'], ttlMs: 1 },
      { executionId: 'we-\u0000', scope: ['read'], ttlMs: 1 },
      { executionId: 'w'.repeat(300), scope: ['read'], ttlMs: 1 },
      { executionId: 'we-1', scope: ['cancel'], ttlMs: 1 },
      { executionId: 'we-1', scope: ['read'], ttlMs: 0 },
      { executionId: 'we-1', scope: ['read'], ttlMs: Number.POSITIVE_INFINITY },
    ]) {
      const error: unknown = await tokens.sign(request as never).catch((caught: unknown) => caught);
      expect(isInvalidArgumentError(error), JSON.stringify(request)).toBe(true);
    }
  });

  it('refuses every single-character change of a token, the last character of the signature included', async () => {
    const { tokens } = tokensOnClock();
    const token = await tokens.sign({ executionId: 'we-1', scope: ['read'], ttlMs: 60_000 });
    // Every character at the end of a segment (where base64url has spare bits), a spread of them elsewhere.
    const segmentEnds = new Set([token.indexOf('.') - 1, token.lastIndexOf('.') - 1, token.length - 1]);
    for (let at = 0; at < token.length; at++) {
      for (const char of segmentEnds.has(at) ? ALPHABET : ['A', 'B', 'Q', 'g', 'w', '_', '-', '.']) {
        if (token[at] === char) continue;
        const changed = `${token.slice(0, at)}${char}${token.slice(at + 1)}`;
        expect(await refusal(tokens.verify(changed, { executionId: 'we-1', scope: 'read' })), changed).not.toBe('accepted');
      }
    }
  });
});

describe('equalInConstantTime', () => {
  it('is byte equality, whatever the lengths (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.uint8Array({ maxLength: 40 }), (a, b) => {
        expect(equalInConstantTime(a, b)).toBe(a.length === b.length && a.every((byte, index) => byte === b[index]));
        expect(equalInConstantTime(a, a.slice())).toBe(true);
      }),
    );
  });
});
