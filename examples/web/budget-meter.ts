import type { BudgetMeterState } from './dashboard-server.js';
import { byId } from './dom.js';

/**
 * The server's request budget at a glance: the minute and the day — used and remaining — and how many
 * requests wait, from the server's `GET /app/budget` stream. The numbers sit in data attributes too,
 * for tests and styles.
 */
export function renderBudget(state: BudgetMeterState): void {
  const meter = byId('budget', HTMLElement);
  meter.hidden = false;
  const minute = byId('budget-minute', HTMLMeterElement);
  minute.max = state.limitPerMinute;
  minute.value = state.usedThisMinute;
  const day = byId('budget-day', HTMLMeterElement);
  day.max = state.limitPerDay;
  day.value = state.usedToday;
  byId('budget-text', HTMLElement).textContent =
    `minute: ${state.usedThisMinute} used, ${state.remainingThisMinute} left · day: ${state.usedToday} used, ${state.remainingToday} left · ${state.queued} waiting`;
  meter.dataset['usedMinute'] = String(state.usedThisMinute);
  meter.dataset['remainingMinute'] = String(state.remainingThisMinute);
  meter.dataset['usedDay'] = String(state.usedToday);
  meter.dataset['remainingDay'] = String(state.remainingToday);
  meter.dataset['queued'] = String(state.queued);
}
