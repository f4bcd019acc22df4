import { cutToWidth, displayWidth } from '../format/display-width.js';
import { formatDuration } from '../format/duration.js';
import type { Paint } from '../format/paint.js';
import type { BudgetView, Meter } from './budget-view.js';
import type { FollowedStatus, RunsByState } from './runs-by-state.js';

const BAR_WIDTH = 24;
const count = new Intl.NumberFormat('en-US');

/** Used requests fill the bar; past nine tenths of the limit in the failure colour. */
function bar({ limit, used }: Meter, paint: Paint): string {
  const filled = limit <= 0 ? BAR_WIDTH : Math.min(BAR_WIDTH, Math.round((used / limit) * BAR_WIDTH));
  const colour = limit > 0 && used / limit >= 0.9 ? paint.fail : paint.ok;
  return `${colour('█'.repeat(filled))}${paint.dim('░'.repeat(BAR_WIDTH - filled))}`;
}

function meterLine(name: string, meter: Meter, paint: Paint, extra = ''): string {
  return `${name.padEnd(8)} ${bar(meter, paint)} ${count.format(meter.used)} used, ${count.format(meter.remaining)} left of ${count.format(meter.limit)}${extra}`;
}

function clock(iso: string): string {
  return iso.slice(11, 19);
}

/** The line as is when it fits `columns`; else its text, uncoloured, cut to them (a cut must not split a colour's escape). */
function fitted(line: string, columns: number): string {
  // eslint-disable-next-line no-control-regex -- the SGR sequences of `Paint`
  const text = line.replace(/\u001B\[\d+m/gu, '');
  return displayWidth(text) <= columns ? line : cutToWidth(text, columns);
}

function runsPolling(runs: number): string {
  return `${count.format(runs)} ${runs === 1 ? 'run' : 'runs'} polling`;
}

/** How each status reads on the terminal, in the order shown. */
const STATUS_WORDS: Readonly<Record<FollowedStatus, string>> = { init: 'init', executing: 'executing', finish: 'finished', failed: 'failed', unknown: 'unknown', unread: 'not read yet' };

function byStateLine(byState: RunsByState | null, paint: Paint): string {
  if (byState === null) return paint.dim('runs by state: none followed through a Redis run hub');
  const shown = (Object.keys(STATUS_WORDS) as FollowedStatus[]).filter((status) => byState.counts[status] > 0);
  const counts = shown.length === 0 ? '0' : shown.map((status) => `${count.format(byState.counts[status])} ${STATUS_WORDS[status]}`).join(' · ');
  return `runs by state: ${byState.atLeast ? 'at least ' : ''}${counts}`;
}

/**
 * One frame of `flowstream budget` on a terminal: the minute and day meters, the service's last word,
 * what waits by class, the runs polling and by state, and the processes of the fleet, each line cut
 * to `columns`.
 */
export function budgetFrame(view: BudgetView, paint: Paint, columns: number): string {
  const nowMs = Date.parse(view.at);
  const where = view.source === 'redis' ? `account ${view.account ?? ''} in Redis` : 'the service';
  const lines = [`${paint.bold('flowstream budget')} · ${where} · ${clock(view.at)}`];
  if (!view.recorded) lines.push(paint.dim(view.source === 'redis' ? '  nothing recorded for this account yet (no process used it in the last two days)' : '  the service sent no rate-limit headers: counts are this command\'s own'));
  lines.push(meterLine('minute', view.minute, paint));
  lines.push(meterLine('day', view.day, paint, view.day.reserve > 0 ? paint.dim(` (${count.format(view.day.reserve)} kept for aborts and starts)`) : ''));
  const { remainingPerMinute, remainingPerDay, at } = view.server;
  if (at !== undefined) {
    const said = [remainingPerMinute === undefined ? '' : `${count.format(remainingPerMinute)} left this minute`, remainingPerDay === undefined ? '' : `${count.format(remainingPerDay)} today`].filter((part) => part !== '').join(', ');
    lines.push(paint.dim(`service  said ${said} (${formatDuration(nowMs - Date.parse(at))} ago)`));
  }
  if (view.pausedUntil !== undefined) lines.push(paint.fail(`paused   after a 429, until ${clock(view.pausedUntil)}`));
  const { waiting, runs, processes } = view;
  if (processes === null) {
    lines.push(paint.dim('waiting, runs and processes: not told by the service (use --redis and --account for a fleet)'));
  } else {
    const classes = (['abort', 'start', 'interactive', 'reads'] as const).filter((name) => waiting[name] !== null);
    const unknown = classes.length < 4 ? paint.dim('  (the rest waits in each process\'s own queue)') : '';
    lines.push(`waiting  ${classes.map((name) => `${name} ${count.format(waiting[name] ?? 0)}`).join(' · ')}${unknown}`);
    lines.push(`runs     ${count.format(runs?.polling ?? 0)} polling`);
    lines.push(byStateLine(runs?.byState ?? null, paint));
    lines.push(`processes ${count.format(processes.length)}`);
    for (const entry of processes) {
      const lease = formatDuration(Date.parse(entry.leaseEndsAt) - nowMs);
      lines.push(`  ${entry.id.slice(0, 8)}  ${count.format(entry.perMinute)}/min  ${runsPolling(entry.runsPolling)}  lease ${lease} left`);
    }
  }
  lines.push(paint.dim('q or Ctrl-C to quit'));
  return lines.map((line) => fitted(line, Math.max(10, columns - 1))).join('\n');
}
