/**
 * `npm start`: the demo (see `demo/run-demo.ts`).
 */
import { runDemo } from './demo/run-demo.js';
import { processInterrupts } from './progress/interrupts.js';

process.exitCode = await runDemo({ env: process.env, stdout: process.stdout, stderr: process.stderr, interrupts: processInterrupts });
