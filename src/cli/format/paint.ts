import colors from 'yoctocolors';

/** The few styles the command uses. */
export interface Paint {
  readonly ok: (text: string) => string;
  readonly fail: (text: string) => string;
  readonly busy: (text: string) => string;
  readonly dim: (text: string) => string;
  readonly bold: (text: string) => string;
}

const plain = (text: string): string => text;

/**
 * Styles that colour only when `enabled` (a TTY that has colours: `hasColors()` honours `NO_COLOR`
 * and `FORCE_COLOR`), so that pipes and logs get plain text.
 *
 * @example
 * ```ts
 * const paint = createPaint(process.stdout.isTTY && process.stdout.hasColors());
 * ```
 */
export function createPaint(enabled: boolean): Paint {
  if (!enabled) return { ok: plain, fail: plain, busy: plain, dim: plain, bold: plain };
  return { ok: colors.green, fail: colors.red, busy: colors.cyan, dim: colors.dim, bold: colors.bold };
}
