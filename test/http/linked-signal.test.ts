import { describe, expect, it } from 'vitest';
import { linkSignals } from '../../src/http/linked-signal.js';

describe('linkSignals', () => {
  it('aborts with the reason of whichever source aborts first', () => {
    const first = new AbortController();
    const second = new AbortController();
    const linked = linkSignals([first.signal, undefined, second.signal]);
    second.abort('withdrawn');
    first.abort('cancelled');
    expect(linked.signal?.aborted).toBe(true);
    expect(linked.signal?.reason).toBe('withdrawn');
  });

  it('no longer follows its sources once unlinked', () => {
    const source = new AbortController();
    const other = new AbortController();
    const linked = linkSignals([source.signal, other.signal]);
    linked.unlink();
    source.abort();
    expect(linked.signal?.aborted).toBe(false);
  });

  it('is aborted at once when a source already is', () => {
    const linked = linkSignals([new AbortController().signal, AbortSignal.abort('gone')]);
    expect(linked.signal?.reason).toBe('gone');
  });

  it('passes a lone signal through, and gives none for none', () => {
    const lone = new AbortController().signal;
    expect(linkSignals([undefined, lone]).signal).toBe(lone);
    expect(linkSignals([undefined]).signal).toBeUndefined();
  });
});
