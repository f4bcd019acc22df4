import { mulberry32 } from './seeded-random.js';

/** Which node's duration to draw, for which execution, around which mean and with which spread. */
export interface DurationDraw {
  readonly canvasId: string;
  readonly nodeId: string;
  /** The execution's rank among this emulator's executions of the canvas: 0, 1, 2, … */
  readonly ordinal: number;
  /** The mean of the distribution, emulator ms (the node's `durationMs`). */
  readonly meanMs: number;
  /** Coefficient of variation: standard deviation ÷ mean; 0 means always `meanMs`. */
  readonly cv: number;
}

/**
 * One execution's duration of one node: log-normal with the asked mean and coefficient of variation
 * (σ² = ln(1 + cv²), μ = ln(mean) − σ²/2, so that E[X] = mean and SD[X] / E[X] = cv), rounded to whole
 * ms and at least 1. Real work times are skewed to the right and never negative, hence log-normal.
 * Seeded from (canvas, node, ordinal) alone, so that two emulators that start the same canvas in the
 * same order see the same durations: two contenders of a bench meet the same timelines.
 */
export function drawDurationMs({ canvasId, nodeId, ordinal, meanMs, cv }: DurationDraw): number {
  if (cv === 0 || meanMs === 0) return meanMs;
  const sigmaSquared = Math.log1p(cv * cv);
  const mu = Math.log(meanMs) - sigmaSquared / 2;
  const random = mulberry32(fnv1a(`${canvasId}\u0000${nodeId}\u0000${String(ordinal)}`));
  return Math.max(1, Math.round(Math.exp(mu + Math.sqrt(sigmaSquared) * standardNormal(random))));
}

/** Box-Muller: one standard normal variate from two uniform ones; 1 − u keeps the logarithm finite. */
function standardNormal(random: () => number): number {
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** FNV-1a, 32 bits over UTF-16 code units: a small, well-spread hash to seed the generator with. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
