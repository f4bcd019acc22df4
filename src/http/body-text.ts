/**
 * Reads a body as text, decoded (the fetch has already undone any gzip), counting as it goes: past
 * `maxBytes` the stream is cancelled and `tooLarge()` thrown, so no more than `maxBytes` plus one chunk
 * is ever held, however much the body would inflate to.
 */
export async function readBodyText(response: Response, maxBytes: number, tooLarge: () => Error): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let received = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    received += value.byteLength;
    if (received > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    text += decoder.decode(value, { stream: true });
  }
}
