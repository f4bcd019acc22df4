/** The two texts of a message (service.md §4.5: `reasoningContent` is usually empty). */
export interface MessageText {
  readonly content: string;
  readonly reasoningContent: string;
}

/** What a message event says about a change of text. */
export interface MessageChange {
  readonly delta: string;
  readonly reasoningDelta: string;
  readonly replaced: boolean;
}

/**
 * The change between two reads of a message, or `undefined` when there is nothing new to say.
 * service.md §4.4 names three cases: a new message (all of its text is new), grown content (the old
 * text is a prefix of the new: only the suffix is new), and rewritten content (anything else: the
 * whole new text, `replaced`). Both texts are judged together so one `replaced` flag covers the event.
 */
export function messageChange(previous: MessageText | undefined, next: MessageText): MessageChange | undefined {
  if (previous === undefined) {
    // service.md §4.5: an empty message says nothing yet; when it gains text it is reported as new.
    if (next.content === '' && next.reasoningContent === '') return undefined;
    return { delta: next.content, reasoningDelta: next.reasoningContent, replaced: false };
  }
  if (previous.content === next.content && previous.reasoningContent === next.reasoningContent) return undefined;
  if (next.content.startsWith(previous.content) && next.reasoningContent.startsWith(previous.reasoningContent)) {
    return {
      delta: next.content.slice(previous.content.length),
      reasoningDelta: next.reasoningContent.slice(previous.reasoningContent.length),
      replaced: false,
    };
  }
  return { delta: next.content, reasoningDelta: next.reasoningContent, replaced: true };
}
