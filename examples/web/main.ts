/**
 * The live dashboard: the workflows the app's server allows, and any number of runs at once, each a
 * card with its graph (edges and live node states), a timeline of its nodes, text as it streams, files
 * (images previewed) and its own Cancel; above them the server's request budget. The page holds no API
 * key: it starts runs through the relay (`POST /runs`, answered with a read-only token), follows them
 * with `connectRun`, and cancels with a token the app mints for that run.
 */
import { type Subscription, tap } from 'rxjs';
// The sources, not `flowstream`: the example builds from a fresh clone without `npm run build`.
import { connectRun, toRunState, type RunState } from '../../src/index.js';
import { renderBudget } from './budget-meter.js';
import type { BudgetMeterState, DashboardConfig, DashboardWorkflow } from './dashboard-server.js';
import { byId } from './dom.js';
import { createRunCard, renderRunError, renderRunState, showExecution } from './run-view.js';

const workflowForm = byId('workflow', HTMLFormElement);
const workflowSelect = byId('workflow-select', HTMLSelectElement);
const runButton = byId('run-button', HTMLButtonElement);
const errorBox = byId('error', HTMLParagraphElement);
const runs = byId('runs', HTMLElement);

/** The red bar at the top: an error, until the next action clears it. */
function showError(error: unknown): void {
  errorBox.textContent = error instanceof Error ? error.message : String(error);
}

/** The JSON of a fetch's answer, or an error carrying the server's own message. */
async function answerOf<T>(response: Promise<Response>): Promise<T> {
  const answer = await response;
  const body = (await answer.json().catch(() => ({}))) as T & { message?: string };
  if (!answer.ok) throw new Error(body.message ?? `HTTP ${answer.status}`);
  return body;
}

/** Asks the app for a token that may cancel this run (it shows the run's read token), then asks the relay to cancel. */
async function cancelRun(relay: string, executionId: string, readToken: string): Promise<void> {
  const { token } = await answerOf<{ token: string }>(fetch('/app/cancel-token', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${readToken}` },
    body: JSON.stringify({ executionId }),
  }));
  // The relay answers once the service shows the end; the card follows the end from the stream meanwhile.
  await answerOf(fetch(`${relay}/executions/${encodeURIComponent(executionId)}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${token}` } }));
}

/** A new run of `workflow`, in a card of its own; the runs already going go on. */
async function startRun(relay: string, workflow: DashboardWorkflow): Promise<void> {
  errorBox.textContent = '';
  // The card at once, "starting" until the relay answers (the server's budget may pace the start).
  const view = createRunCard(runs, workflow);
  let started: { executionId: string; token: string };
  try {
    started = await answerOf<{ executionId: string; token: string }>(fetch(`${relay}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ canvasId: workflow.canvasId }),
    }));
  } catch (error) {
    renderRunError(view, error instanceof Error ? error.message : String(error));
    throw error;
  }
  const { executionId, token } = started;
  showExecution(view, executionId);
  let latest: RunState | undefined;
  let cancelling = false;
  // The run's events come in (the stream's own `connection` notices aside), and how many of them the
  // card shows: a card up to date with its stream says as many as the relay sent (`data-events`).
  let received = 0;
  const render = (): void => {
    if (latest !== undefined) renderRunState(view, latest, cancelling);
  };
  // A failed workflow completes the stream with its result shown; only the relay failing errors it.
  const follow: Subscription = connectRun(`${relay}/executions/${encodeURIComponent(executionId)}/events`, { token, failOnWorkflowError: false })
    .pipe(
      tap((event) => {
        if (event.type !== 'connection') received += 1;
      }),
      toRunState(),
    )
    .subscribe({
      next: (state) => {
        latest = state;
        render();
        view.section.dataset['events'] = String(received);
      },
      error: (error: unknown) => {
        renderRunError(view, error instanceof Error ? error.message : String(error));
        showError(error);
      },
    });
  view.cancel.addEventListener('click', () => {
    if (cancelling || follow.closed) return;
    cancelling = true;
    render();
    cancelRun(relay, executionId, token).catch((error: unknown) => {
      // Not cancelled: the run goes on, and Cancel may be pressed again.
      cancelling = false;
      render();
      showError(error);
    });
  });
}

async function load(): Promise<void> {
  const config = await answerOf<DashboardConfig>(fetch('/app/dashboard'));
  workflowSelect.replaceChildren(...config.workflows.map((workflow) => new Option(workflow.title, workflow.canvasId)));
  workflowForm.hidden = false;
  runButton.disabled = config.workflows.length === 0;
  workflowForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const workflow = config.workflows.find((known) => known.canvasId === workflowSelect.value);
    if (workflow !== undefined) startRun(config.relay, workflow).catch(showError);
  });
  new EventSource('/app/budget').addEventListener('budget', (event) => {
    renderBudget(JSON.parse((event as MessageEvent<string>).data) as BudgetMeterState);
  });
}

load().catch(showError);
