/**
 * The optimal string alignment distance (Levenshtein with adjacent transpositions): how many single
 * edits turn `a` into `b`. For names of a few dozen characters at most.
 */
function editDistance(a: string, b: string): number {
  const width = b.length + 1;
  const cells = new Uint32Array((a.length + 1) * width);
  const at = (i: number, j: number): number => cells[i * width + j] ?? 0;
  for (let i = 0; i <= a.length; i += 1) cells[i * width] = i;
  for (let j = 0; j <= b.length; j += 1) cells[j] = j;
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      cells[i * width + j] = best;
    }
  }
  return at(a.length, b.length);
}

/** The name of `names` closest to `name` within two edits (case aside), if one is: the "did you mean". */
export function nearestName(name: string, names: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const candidate of names) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}
