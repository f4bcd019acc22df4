/**
 * Escape sequences a terminal acts on: OSC (`ESC ]` … BEL or ST: titles, hyperlinks, a clipboard
 * write), DCS/SOS/PM/APC strings, CSI (`ESC [` …: cursor moves, erasing, colours) and two-character
 * escapes. Matched whole, so nothing of their body is left to show.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is this pattern's purpose
const ESCAPE_SEQUENCE = /\u001b(?:[\]PX^_][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\[[0-?]*[ -/]*[@-~]?|[ -~]?)|\u009b[0-?]*[ -/]*[@-~]?|[\u0090\u0098\u009d\u009e\u009f][^\u0007\u009c]*[\u0007\u009c]?/gu;
/** Every other C0 and C1 control, DEL, and the bidirectional overrides that reorder what is shown. */
// eslint-disable-next-line no-control-regex -- as above
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu;
const LINE_BREAKS = /[\n\t]/gu;

/**
 * Text from the server, made safe to print: a title, a message or an error could carry escape
 * sequences that a terminal executes (a clipboard write, a new window title, a faked prompt). They are
 * removed, as is every other control character; `multiline` keeps newlines and tabs (a message's
 * text), otherwise they become spaces (a title on one line).
 */
export function terminalText(text: string, options: { readonly multiline?: boolean } = {}): string {
  const stripped = text.replace(ESCAPE_SEQUENCE, '').replace(CONTROL, '');
  return options.multiline === true ? stripped : stripped.replace(LINE_BREAKS, ' ');
}

/**
 * A value from the server with every string in it made safe to print (newlines kept: renderers
 * decide how lines are shown). For the events, results and plans the command displays.
 */
export function terminalSafe<T>(value: T): T {
  if (typeof value === 'string') return terminalText(value, { multiline: true }) as T;
  if (Array.isArray(value)) return value.map((entry: unknown) => terminalSafe(entry)) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, terminalSafe(entry)])) as T;
  }
  return value;
}
