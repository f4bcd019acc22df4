#!/usr/bin/env node
/**
 * The `flowstream` command (package.json `bin`).
 */
import { runCli } from './cli.js';
import { EXIT_CODES } from './exit-code.js';
import { dieOfHangUpAtExit, ignoreGoneOutput } from './output-gone.js';
import { PendingAborts } from './pending-aborts.js';
import { processInterrupts } from './progress/interrupts.js';

/**
 * How long the process waits, after the command returned, for what it still has to do: the answer to
 * an abort sent on a stop signal, which the library sends again through an outage for longer than a
 * user or a CI job waits. Past it, the process says which execution may be left running, and how to
 * abort it, and exits 4.
 */
const DRAIN_LIMIT_MS = 35_000;

ignoreGoneOutput([process.stdout, process.stderr]);
dieOfHangUpAtExit();

const aborts = new PendingAborts(
  (text) => {
    process.stderr.write(text);
  },
  () => {
    process.exitCode = EXIT_CODES.abortFailed;
  },
);
const exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  // Only `budget` reads keys: no other command touches stdin.
  get stdin() {
    return process.stdin;
  },
  interrupts: processInterrupts,
  aborts,
});
process.exitCode = aborts.failed ? EXIT_CODES.abortFailed : exitCode;
// The process ends once pending work (an abort sent on a stop signal) is done; this unref'd timer
// fires only if something still holds it after that long.
setTimeout(() => {
  process.exit(aborts.giveUp(DRAIN_LIMIT_MS) ? EXIT_CODES.abortFailed : undefined);
}, DRAIN_LIMIT_MS).unref();
