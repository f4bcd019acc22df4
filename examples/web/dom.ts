/** The page's elements by id, checked once at start-up so a renamed id fails loudly, not later. */
export function byId<T extends HTMLElement>(id: string, kind: new () => T): T {
  const found = document.getElementById(id);
  if (!(found instanceof kind)) throw new Error(`#${id} is missing or is not a ${kind.name}`);
  return found;
}

/** A new element with its text set through `textContent`: nothing the service sends is parsed as HTML. */
export function element<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text = ''): HTMLElementTagNameMap[K] {
  const created = document.createElement(tag);
  if (className !== '') created.className = className;
  created.textContent = text;
  return created;
}
