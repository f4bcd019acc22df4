// The public surface of `flowstream/react`, export by export.
export { useRun } from './use-run.js';
export { useStartRun, type RunStarter, type StartedRun, type StartRunFunction, type StartRunStatus, type StartRunView } from './use-start-run.js';
