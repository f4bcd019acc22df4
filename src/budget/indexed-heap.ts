/**
 * A binary min-heap ordered by `before`, whose items know their position: the heap writes it in the
 * item's `slot` field (−1 while out), so that removing an item from the middle (a waiting request
 * cancelled) costs O(log n) instead of a search. Push, pop and remove in O(log n), peek in O(1). An
 * item can be in as many heaps as it has slot fields, in one per field.
 */
export class IndexedHeap<K extends string, T extends Record<K, number>> {
  readonly #items: T[] = [];

  constructor(
    private readonly slot: K,
    private readonly before: (a: T, b: T) => boolean,
  ) {}

  get size(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  push(item: T): void {
    this.#items.push(item);
    this.#up(this.#items.length - 1);
  }

  pop(): T | undefined {
    const top = this.#items[0];
    if (top !== undefined) this.remove(top);
    return top;
  }

  /** Takes `item` out wherever it sits; false when it is not in this heap. */
  remove(item: T): boolean {
    const index = item[this.slot];
    if (this.#items[index] !== item) return false;
    const last = this.#items.pop();
    (item as Record<K, number>)[this.slot] = -1;
    if (last !== undefined && last !== item) {
      this.#place(last, index);
      this.#down(index);
      this.#up(last[this.slot]);
    }
    return true;
  }

  #up(start: number): void {
    let index = start;
    const item = this.#items[index];
    if (item === undefined) return;
    while (index > 0) {
      const parentIndex = (index - 1) >>> 1;
      const parent = this.#items[parentIndex];
      if (parent === undefined || !this.before(item, parent)) break;
      this.#place(parent, index);
      index = parentIndex;
    }
    this.#place(item, index);
  }

  #down(start: number): void {
    let index = start;
    const item = this.#items[index];
    if (item === undefined) return;
    for (;;) {
      const leftIndex = 2 * index + 1;
      const left = this.#items[leftIndex];
      if (left === undefined) break;
      const right = this.#items[leftIndex + 1];
      const [childIndex, child] = right !== undefined && this.before(right, left) ? [leftIndex + 1, right] : [leftIndex, left];
      if (!this.before(child, item)) break;
      this.#place(child, index);
      index = childIndex;
    }
    this.#place(item, index);
  }

  #place(item: T, index: number): void {
    this.#items[index] = item;
    (item as Record<K, number>)[this.slot] = index;
  }
}
