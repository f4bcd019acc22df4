/**
 * The live dashboard: the account's workflows listed on load, the chosen one's variables from its plan,
 * and any number of runs at once, each a card with its graph laid out by dependencies, live node states
 * and times, streaming text, files (images previewed) and its own Cancel; above them the request
 * budget's minute and day. Everything goes through flowstream's browser-safe core; each card renders
 * `toRunState()` and owns one subscription, whose end (Cancel) aborts that execution.
 */
import { defer, switchMap, type Subscription } from 'rxjs';
// The sources, not `flowstream`: the example builds from a fresh clone without `npm run build`.
import { createClient, isWorkflowFailedError, toRunState, type Client, type PlanTask, type PlanVariable } from '../../src/index.js';
import { renderBudget } from './budget-meter.js';
import { formText, prefillConnection } from './connection.js';
import { byId } from './dom.js';
import { createRunCard, renderRunEnd, renderRunState } from './run-view.js';
import { readVariables, renderVariableFields } from './variables-form.js';

const connectionForm = byId('connection', HTMLFormElement);
const workflowForm = byId('workflow', HTMLFormElement);
const workflowSelect = byId('workflow-select', HTMLSelectElement);
const variablesBox = byId('variables', HTMLDivElement);
const runButton = byId('run-button', HTMLButtonElement);
const errorBox = byId('error', HTMLParagraphElement);
const runs = byId('runs', HTMLElement);

let client: Client | undefined;
/** The connection `client` was made for: the same one keeps the client, and so one budget for every run. */
let connectedTo = '';
let budgetWatch: Subscription | undefined;
let plan: { readonly canvasId: string; readonly title: string; readonly tasks: readonly PlanTask[]; readonly variables: readonly PlanVariable[] } | undefined;
let planLoad: AbortController | undefined;

/** The red bar at the top: a transport or API error, until the next action clears it. */
function showError(error: unknown): void {
  errorBox.textContent = error instanceof Error ? error.message : String(error);
}

async function loadPlan(api: Client): Promise<void> {
  // Only the latest choice matters: a slower answer for an earlier one must not overwrite it.
  planLoad?.abort();
  const load = new AbortController();
  planLoad = load;
  const canvasId = workflowSelect.value;
  const title = workflowSelect.selectedOptions[0]?.text ?? canvasId;
  plan = undefined;
  runButton.disabled = true;
  try {
    const { tasks, variables } = await api.workflows.get(canvasId, { signal: load.signal });
    plan = { canvasId, title, tasks, variables };
    renderVariableFields(variablesBox, variables);
    runButton.disabled = false;
  } catch (error) {
    if (!load.signal.aborted) showError(error);
  }
}

function useClient(api: Client): void {
  if (api === client && budgetWatch !== undefined) return;
  client = api;
  budgetWatch?.unsubscribe();
  budgetWatch = api.budget?.state$.subscribe(renderBudget);
}

async function search(): Promise<void> {
  errorBox.textContent = '';
  const keyword = formText(connectionForm, 'keyword');
  try {
    // createClient checks its options at once (a key, an absolute base URL): a typo shows as an error here.
    const apiKey = formText(connectionForm, 'apiKey');
    const baseUrl = formText(connectionForm, 'baseUrl');
    const api = client !== undefined && connectedTo === `${baseUrl}\n${apiKey}` ? client : createClient({ apiKey, baseUrl });
    connectedTo = `${baseUrl}\n${apiKey}`;
    useClient(api);
    const workflows = await api.workflows.search(keyword === '' ? {} : { keyword });
    workflowSelect.replaceChildren(...workflows.map((workflow) => new Option(workflow.title, workflow.canvasId)));
    workflowForm.hidden = workflows.length === 0;
    if (workflows.length === 0) showError(`No workflow matches “${keyword}”.`);
    else await loadPlan(api);
  } catch (error) {
    // The list no longer stands for this connection.
    workflowForm.hidden = true;
    showError(error);
  }
}

/** A new run of the chosen workflow, in a card of its own; the runs already going go on. */
function startRun(): void {
  if (client === undefined || plan === undefined) return;
  const api = client;
  const { canvasId, title, tasks } = plan;
  errorBox.textContent = '';
  const view = createRunCard(runs, title, tasks);
  renderRunState(view, { nodes: [], files: [], progress: { succeeded: 0, failed: 0, done: 0, total: tasks.length }, elapsedMs: 0 });
  let ended = false;
  const run: Subscription = defer(() => readVariables(variablesBox, (files) => api.files.upload(files)))
    .pipe(
      switchMap((variables) => api.run(canvasId, { variables })),
      toRunState(),
    )
    .subscribe({
      next: (state) => { renderRunState(view, state); },
      error: (error: unknown) => {
        ended = true;
        view.cancel.disabled = true;
        // A failed workflow is already on screen from its `finished` state; anything else is not.
        if (isWorkflowFailedError(error)) return;
        renderRunEnd(view, 'error', 'Stopped by an error (shown above).');
        showError(error);
      },
      complete: () => {
        ended = true;
        view.cancel.disabled = true;
      },
    });
  view.cancel.addEventListener('click', () => {
    if (ended) return;
    // Unsubscribing before `finished` is what aborts the execution (`abortOnUnsubscribe`, on for a run).
    run.unsubscribe();
    renderRunEnd(view, 'aborted', 'Aborted: the execution was stopped.');
  });
}

prefillConnection(connectionForm, location.hash);
connectionForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void search();
});
workflowSelect.addEventListener('change', () => {
  if (client !== undefined) void loadPlan(client);
});
workflowForm.addEventListener('submit', (event) => {
  event.preventDefault();
  startRun();
});
// Workflows listed on load when the connection is known (the link's fragment).
if (formText(connectionForm, 'baseUrl') !== '' && formText(connectionForm, 'apiKey') !== '') void search();
