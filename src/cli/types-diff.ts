/** One line of a line diff: kept, removed from the old text, or added in the new. */
export interface DiffLine {
  readonly kind: ' ' | '-' | '+';
  readonly text: string;
}

/**
 * The lines of `before` and `after` as a shortest edit: a longest common subsequence kept, the rest
 * removed or added (removals before additions where they meet). Quadratic, for files of a few
 * thousand lines at most — a generated types module.
 */
export function diffLines(before: readonly string[], after: readonly string[]): readonly DiffLine[] {
  const width = after.length + 1;
  // common[i * width + j]: the longest common subsequence of before[i…] and after[j…].
  const common = new Uint32Array((before.length + 1) * width);
  for (let i = before.length - 1; i >= 0; i -= 1) {
    for (let j = after.length - 1; j >= 0; j -= 1) {
      common[i * width + j] = before[i] === after[j] ? (common[(i + 1) * width + j + 1] ?? 0) + 1 : Math.max(common[(i + 1) * width + j] ?? 0, common[i * width + j + 1] ?? 0);
    }
  }
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    const old = before[i];
    const next = after[j];
    if (old !== undefined && next !== undefined && old === next) {
      lines.push({ kind: ' ', text: old });
      i += 1;
      j += 1;
    } else if (old !== undefined && (next === undefined || (common[(i + 1) * width + j] ?? 0) >= (common[i * width + j + 1] ?? 0))) {
      lines.push({ kind: '-', text: old });
      i += 1;
    } else {
      lines.push({ kind: '+', text: next ?? '' });
      j += 1;
    }
  }
  return lines;
}

/** A hunk's range in one file, as a unified diff writes it (`start,count`; an empty range starts one line before). */
function range(start: number, count: number): string {
  return count === 1 ? String(start) : `${count === 0 ? start - 1 : start},${count}`;
}

/**
 * A unified diff (as `diff -u` writes it, `context` lines around each change) from `before` to
 * `after`, or `''` when they are equal.
 */
export function unifiedDiff(before: string, after: string, labels: { readonly before: string; readonly after: string }, context = 3): string {
  if (before === after) return '';
  const lines = diffLines(before.split('\n'), after.split('\n'));
  const changed = lines.flatMap((line, index) => (line.kind === ' ' ? [] : [index]));
  // Hunks: runs of changes closer than 2 × context lines, with their context around them.
  const hunks: { from: number; to: number }[] = [];
  for (const index of changed) {
    const last = hunks.at(-1);
    if (last !== undefined && index - last.to <= 2 * context) last.to = index + 1;
    else hunks.push({ from: index, to: index + 1 });
  }
  const out = [`--- ${labels.before}`, `+++ ${labels.after}`];
  for (const hunk of hunks) {
    const from = Math.max(0, hunk.from - context);
    const to = Math.min(lines.length, hunk.to + context);
    const oldStart = lines.slice(0, from).filter((line) => line.kind !== '+').length + 1;
    const newStart = lines.slice(0, from).filter((line) => line.kind !== '-').length + 1;
    const shown = lines.slice(from, to);
    out.push(`@@ -${range(oldStart, shown.filter((line) => line.kind !== '+').length)} +${range(newStart, shown.filter((line) => line.kind !== '-').length)} @@`);
    out.push(...shown.map((line) => `${line.kind}${line.text}`));
  }
  return `${out.join('\n')}\n`;
}
