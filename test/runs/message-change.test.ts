import { describe, expect, it } from 'vitest';
import { messageChange } from '../../src/runs/execution-view.js';

const text = (content: string, reasoningContent = '') => ({ content, reasoningContent });

describe('messageChange (service.md §4.4)', () => {
  it('reports a new message with all of its text', () => {
    expect(messageChange(undefined, text('Hello', 'think'))).toEqual({ delta: 'Hello', reasoningDelta: 'think', replaced: false });
  });

  it('says nothing about a new message without text (service.md §4.5)', () => {
    expect(messageChange(undefined, text(''))).toBeUndefined();
  });

  it('says nothing when the text did not change', () => {
    expect(messageChange(text('Hello'), text('Hello'))).toBeUndefined();
  });

  it('reports only the new suffix of grown content', () => {
    expect(messageChange(text('Hel', 'a'), text('Hello', 'ab'))).toEqual({ delta: 'lo', reasoningDelta: 'b', replaced: false });
  });

  it('reports rewritten content whole, marked replaced', () => {
    expect(messageChange(text('Hello'), text('Goodbye'))).toEqual({ delta: 'Goodbye', reasoningDelta: '', replaced: true });
  });

  it('treats shortened content as a rewrite', () => {
    expect(messageChange(text('Hello'), text('Hell'))).toEqual({ delta: 'Hell', reasoningDelta: '', replaced: true });
  });

  it('replaces both texts when only the reasoning was rewritten', () => {
    expect(messageChange(text('Hello', 'abc'), text('Hello!', 'xyz'))).toEqual({ delta: 'Hello!', reasoningDelta: 'xyz', replaced: true });
  });
});
