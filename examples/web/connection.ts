/**
 * The connection fields, prefilled from the page's fragment (`#baseUrl=…&apiKey=…&keyword=…`): the
 * fragment never leaves the browser, so the key is not written to the static server's logs.
 */
export function prefillConnection(form: HTMLFormElement, fragment: string): void {
  const values = new URLSearchParams(fragment.replace(/^#/, ''));
  for (const name of ['baseUrl', 'apiKey', 'keyword']) {
    const field = form.elements.namedItem(name);
    const value = values.get(name);
    if (field instanceof HTMLInputElement && value !== null) field.value = value;
  }
}

/** A text field of a form, trimmed; `''` when absent. */
export function formText(form: HTMLFormElement, name: string): string {
  const value = new FormData(form).get(name);
  return typeof value === 'string' ? value.trim() : '';
}
