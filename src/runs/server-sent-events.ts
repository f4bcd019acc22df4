/** One message of a `text/event-stream`: its event name (`message` when none), its data, and its id when it set one. */
export interface ServerSentMessage {
  readonly event: string;
  readonly data: string;
  readonly id?: string;
}

/** What a stream says: a message, or a new reconnection delay (`retry:`). */
export type ServerSentItem = { readonly kind: 'message'; readonly message: ServerSentMessage } | { readonly kind: 'retry'; readonly retryMs: number };

/**
 * Reads a `text/event-stream` as its text arrives, in chunks cut anywhere, by the HTML standard's
 * rules: lines end in CRLF, LF or CR; `:` starts a comment; a blank line dispatches the message when it
 * has data; `retry:` takes digits only. The same items come out however the text was cut.
 *
 * @example
 * ```ts
 * const reader = new ServerSentEvents();
 * reader.push('event: status\nid: 3\ndata: {}\n\n'); // [{ kind: 'message', message: { event: 'status', data: '{}', id: '3' } }]
 * ```
 */
export class ServerSentEvents {
  #pending = '';
  #skipLf = false;
  #data: string[] = [];
  #event = '';
  #id: string | undefined;

  /** Takes the next chunk of text and returns what it completed. */
  push(chunk: string): ServerSentItem[] {
    if (chunk === '') return [];
    // A chunk that ended in CR closed its line; an LF opening the next chunk is the rest of that CRLF.
    const text = this.#pending + (this.#skipLf && chunk.startsWith('\n') ? chunk.slice(1) : chunk);
    this.#skipLf = text.endsWith('\r');
    const lines = text.split(/\r\n|\r|\n/u);
    this.#pending = lines.pop() ?? '';
    const items: ServerSentItem[] = [];
    for (const line of lines) this.#line(line, items);
    return items;
  }

  #line(line: string, items: ServerSentItem[]): void {
    if (line === '') {
      this.#dispatch(items);
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.#event = value;
        break;
      case 'data':
        this.#data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.#id = value;
        break;
      case 'retry':
        if (/^\d+$/u.test(value)) items.push({ kind: 'retry', retryMs: Number(value) });
        break;
      default:
        break;
    }
  }

  #dispatch(items: ServerSentItem[]): void {
    const id = this.#id;
    if (this.#data.length > 0) items.push({ kind: 'message', message: { event: this.#event === '' ? 'message' : this.#event, data: this.#data.join('\n'), ...(id === undefined ? {} : { id }) } });
    this.#data = [];
    this.#event = '';
    this.#id = undefined;
  }
}
