import { InvalidArgumentError } from 'commander';

/** Commander parser of a number above zero (`--timeout 2.5`, `--speed 50`). */
export function positiveNumber(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0) throw new InvalidArgumentError('expected a number above 0.');
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
