// The request budget every request of a client passes through: what the composition root and
// the public surface need. The budget core's pieces stay internal to this folder.
export { createAccountBudget, isAccountBudget } from './account-budget.js';
export type { AccountBudget, AccountBudgetOptions } from './account-budget.js';
export { createMemoryLedger } from './ledger.js';
export type { AccountLedger, MemoryLedger } from './ledger.js';
export type { BudgetLimits, RequestBudgetOptions } from './account-rules.js';
export type { BudgetState, DayView } from './account-budget.js';
export type { KeyCadence } from './budget-core.js';
export type { ReadNeed, ServerView } from '../domain/budget.js';
export { createDurationModel } from './duration-model.js';
export type { DurationModelOptions } from './duration-model.js';
