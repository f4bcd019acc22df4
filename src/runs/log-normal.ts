import type { DurationEstimate } from '../domain/durations.js';

/*
 * The little of the log-normal distribution that read timing needs: how likely a node that has run
 * `elapsedMs` is still running, on a log scale so that a node far past its expected end (a survival
 * of 1e-30) still compares with another.
 */

/**
 * ln(erfc(x)) for x ≥ 0, from the Chebyshev fit of Numerical Recipes' `erfcc` (relative error under
 * 1.2e-7 everywhere), written in its log form so that it holds far into the tail.
 */
function logErfc(x: number): number {
  const t = 1 / (1 + 0.5 * x);
  const poly =
    -1.26551223 +
    t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  return Math.log(t) - x * x + poly;
}

/** ln P(Z > z) for a standard normal Z. */
export function logNormalTail(z: number): number {
  if (z >= 0) return logErfc(z / Math.SQRT2) - Math.LN2;
  // P(Z > z) = 1 − P(Z > −z), and P(Z > −z) ≤ ½ here, so the subtraction loses nothing.
  return Math.log1p(-Math.exp(logErfc(-z / Math.SQRT2) - Math.LN2));
}

/** ln P(duration > elapsedMs) for a node with this estimate; 0 (certain) before it could have ended. */
export function logSurvival(estimate: DurationEstimate, elapsedMs: number): number {
  if (elapsedMs <= 0) return 0;
  return logNormalTail((Math.log(elapsedMs) - Math.log(estimate.medianMs)) / estimate.logSigma);
}

/** The mean of a log-normal with this estimate: median × e^(σ²/2). */
export function meanDuration(estimate: DurationEstimate): number {
  return estimate.medianMs * Math.exp((estimate.logSigma * estimate.logSigma) / 2);
}
