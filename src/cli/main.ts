#!/usr/bin/env node
/**
 * The `flowstream` command (package.json `bin`).
 */
import { runCli } from './cli.js';
import { processInterrupts } from './progress/interrupts.js';

/** Longer than the library's abort deadline (30 s), so that an abort sent on Ctrl-C has every chance. */
const DRAIN_LIMIT_MS = 35_000;

// A reader that goes away (`flowstream run … --json | head`) must not crash the run: its end still decides the exit code.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

process.exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  // Only `budget` reads keys: no other command touches stdin.
  get stdin() {
    return process.stdin;
  },
  interrupts: processInterrupts,
});
// The process ends once pending work (an abort sent on Ctrl-C) is done; this unref'd timer fires only
// if something still holds it after that long.
setTimeout(() => process.exit(), DRAIN_LIMIT_MS).unref();
