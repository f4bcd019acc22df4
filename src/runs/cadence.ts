// The polling cadence lives in poll-plan.ts; this re-export keeps the one import still pointing here.
export { cadenceBounds } from './poll-plan.js';
