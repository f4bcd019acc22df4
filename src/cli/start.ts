/**
 * `npm start`: the demo (see `demo/run-demo.ts`).
 */
import { runDemo } from './demo/run-demo.js';
import { dieOfHangUpAtExit, ignoreGoneOutput } from './output-gone.js';
import { processInterrupts } from './progress/interrupts.js';

// Ctrl-C, SIGTERM and SIGHUP abort the pipeline's execution; a closed terminal must not stop that.
ignoreGoneOutput([process.stdout, process.stderr]);
dieOfHangUpAtExit();

process.exitCode = await runDemo({ env: process.env, stdout: process.stdout, stderr: process.stderr, interrupts: processInterrupts });
