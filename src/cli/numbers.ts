import { InvalidArgumentError } from 'commander';

/** Commander parser of a number above zero (`--timeout 2.5`, `--speed 50`). */
export function positiveNumber(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0) throw new InvalidArgumentError('expected a number above 0.');
  return value;
}

/** The longest wait a timer takes (2^31 − 1 ms, about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1_000);

/**
 * Commander parser of a number of seconds above zero that a timer can wait (`--interval 30`,
 * `--timeout 600`): at most about 24 days, since a longer wait would not wait at all.
 */
export function positiveSeconds(text: string): number {
  const value = positiveNumber(text);
  if (value > MAX_TIMER_SECONDS) throw new InvalidArgumentError(`expected a number of seconds above 0, at most ${MAX_TIMER_SECONDS} (24 days).`);
  return value;
}

/** Commander parser of a whole number from `min` (`--limit 10`, `--port 0`). */
export function wholeNumber(min: number): (text: string) => number {
  return (text) => {
    const value = Number(text);
    if (!/^\d+$/u.test(text.trim()) || value < min) throw new InvalidArgumentError(`expected a whole number from ${min}.`);
    return value;
  };
}

/** The highest TCP port. */
const MAX_PORT = 65_535;

/** Commander parser of a TCP port (`--port 8080`; 0: any free one). */
export function portNumber(text: string): number {
  const value = wholeNumber(0)(text);
  if (value > MAX_PORT) throw new InvalidArgumentError(`expected a port from 0 to ${MAX_PORT}.`);
  return value;
}
