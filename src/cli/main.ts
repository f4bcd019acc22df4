#!/usr/bin/env node
/**
 * The `flowstream` command (package.json `bin`).
 */
import { runCli } from './cli.js';
import { EXIT_CODES } from './exit-code.js';
import { dieOfHangUpAtExit } from './hung-up-terminal.js';
import { PendingAborts } from './pending-aborts.js';
import { processInterrupts } from './progress/interrupts.js';

/**
 * How long the process waits, after the command returned, for what it still has to do: the answer to
 * an abort sent on a stop signal, which the library sends again through an outage for longer than a
 * user or a CI job waits. Past it, the process says which execution may be left running, and how to
 * abort it, and exits 4.
 */
const DRAIN_LIMIT_MS = 35_000;

/**
 * Output that cannot be written any more must not end the command: a reader that goes away
 * (`flowstream run … --json | head`: EPIPE) or a terminal that was closed (SIGHUP, then EIO). The
 * abort that a closed terminal asked for must still be sent and answered, and the run's end still
 * decides the exit code.
 */
const GONE_OUTPUT = new Set(['EPIPE', 'EIO']);
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === undefined || !GONE_OUTPUT.has(error.code)) throw error;
  });
}

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
