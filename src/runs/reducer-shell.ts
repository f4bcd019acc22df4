// The reducer's shell lives in run-machine.ts; this re-export keeps the one import still pointing here.
export { reducerShell } from './run-machine.js';
