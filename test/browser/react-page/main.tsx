/**
 * A page on its own origin that follows a run with `useRun(connectRun(...))` through a run relay on
 * another origin, in StrictMode. The fragment carries the relay's events URL, its execution and token, and the
 * emulator's URL and key: the page shows that a direct call to the API fails in the browser.
 */
import { StrictMode, useEffect, useMemo } from 'react';
import { createRoot } from 'react-dom/client';
import { type Observable, tap } from 'rxjs';
import { createClient } from '../../../src/client.js';
import { connectRun } from '../../../src/runs/connect-run.js';
import { type StartedRun, useRun, useStartRun } from '../../../src/react/index.js';
import type { RunEvent } from '../../../src/runs/events.js';
import type { RunInput } from '../../../src/runs/runs.js';

const fragment = new URLSearchParams(location.hash.slice(1));
const setting = (name: string): string => fragment.get(name) ?? '';

/** How many of a stream's events came in (its own `connection` notices aside): the test compares it with what the relay sent. */
const received = new WeakMap<Observable<RunEvent>, { count: number }>();

/** `events`, counting what comes in (see `received`). */
function counted(events: Observable<RunEvent>): Observable<RunEvent> {
  const tally = { count: 0 };
  const counting = events.pipe(tap((event) => {
    if (event.type !== 'connection') tally.count += 1;
  }));
  received.set(counting, tally);
  return counting;
}

/** Every progress the page rendered, for the test to read. */
const shown: string[] = [];
(globalThis as { shownProgress?: string[] }).shownProgress = shown;

function Progress({ eventsUrl, token }: { readonly eventsUrl: string; readonly token: string }) {
  const run$ = useMemo(() => counted(connectRun(eventsUrl, { token })), [eventsUrl, token]);
  const state = useRun(run$);
  const line = state === undefined ? 'connecting' : `${state.status ?? '?'} ${state.progress.succeeded}/${state.progress.total}`;
  useEffect(() => {
    shown.push(line);
  }, [line]);
  return (
    <section data-testid="run" data-state={state?.result?.status ?? 'running'} data-execution-id={setting('executionId')} data-events={received.get(run$)?.count ?? 0}>
      <p data-testid="progress">{line}</p>
      <ol>
        {state?.nodes.filter((node) => node.task).map((node) => (
          <li key={node.nodeId} data-testid="node" data-status={node.status}>{node.title ?? node.nodeId}: {node.text}</li>
        ))}
      </ol>
    </section>
  );
}

/** The events of the run started last through the relay. */
let startedEvents: Observable<RunEvent> | undefined;

/** Starts a run through the relay's `POST /runs`, and follows and cancels it through the relay. */
async function startThroughRelay(canvasId: string, input: RunInput): Promise<StartedRun> {
  const relay = setting('relayBase');
  const answer = await fetch(`${relay}/runs`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ canvasId, ...input }) });
  if (!answer.ok) throw new Error(`The relay refused the start: ${answer.status}`);
  const { executionId, token } = (await answer.json()) as { executionId: string; token: string };
  const events = counted(connectRun(`${relay}/executions/${executionId}/events`, { token, failOnWorkflowError: false }));
  startedEvents = events;
  return {
    executionId,
    events,
    cancel: () => fetch(`${relay}/executions/${executionId}/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } }),
  };
}

/** With a client instead (a page that may hold a key: here an emulator that answers this page). */
// It polls on real time while the test moves the emulator's clock: often, so that it reads the end soon after.
const starter =
  setting('clientApiUrl') === ''
    ? startThroughRelay
    : createClient({ apiKey: setting('clientApiKey'), baseUrl: setting('clientApiUrl'), polling: { minMs: 100, maxMs: 300 } });

function Starter() {
  const run = useStartRun(starter);
  return (
    <section data-testid="starter" data-status={run.status} data-cancelling={String(run.state?.cancelling === true)} data-ended-by={run.state?.result?.endedBy ?? ''} data-execution-id={run.executionId ?? ''} data-events={startedEvents === undefined ? 0 : (received.get(startedEvents)?.count ?? 0)}>
      <button type="button" onClick={() => { run.start('c-sample-linear'); }}>Run</button>
      <button type="button" onClick={run.cancel}>Cancel</button>
      <p data-testid="starter-progress">{run.state === undefined ? '' : `${run.state.progress.succeeded}/${run.state.progress.total}`}</p>
    </section>
  );
}

/** Calls the API itself, as a page must not: the browser refuses (the emulator, like the service, answers no page). */
async function directCall(): Promise<string> {
  try {
    const response = await fetch(`${setting('apiUrl')}/openapi/workflows`, { headers: { Authorization: `Bearer ${setting('apiKey')}` } });
    return `answered ${response.status}`;
  } catch (error) {
    return `refused: ${error instanceof Error ? error.name : 'unknown'}`;
  }
}

void directCall().then((outcome) => {
  document.querySelector('[data-testid="direct"]')!.textContent = outcome;
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    {setting('eventsUrl') === '' ? <Starter /> : <Progress eventsUrl={setting('eventsUrl')} token={setting('token')} />}
  </StrictMode>,
);
