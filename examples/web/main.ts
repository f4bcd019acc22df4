/**
 * The live progress page: search the account's workflows, fill the chosen one's variables from its
 * plan, run it and watch it. Everything goes through flowstream's browser-safe core; the page only
 * renders `toRunState()` and owns one subscription, whose end (Cancel) aborts the execution.
 */
import { defer, switchMap, type Subscription } from 'rxjs';
// The sources, not `flowstream`: the example builds from a fresh clone without `npm run build`.
import { createClient, isWorkflowFailedError, toRunState, type Client, type PlanVariable } from '../../src/index.js';
import { formText, prefillConnection } from './connection.js';
import { byId } from './dom.js';
import { findRunView, renderRunEnd, renderRunState } from './run-view.js';
import { readVariables, renderVariableFields } from './variables-form.js';

const connectionForm = byId('connection', HTMLFormElement);
const workflowForm = byId('workflow', HTMLFormElement);
const workflowSelect = byId('workflow-select', HTMLSelectElement);
const variablesBox = byId('variables', HTMLDivElement);
const searchButton = byId('search-button', HTMLButtonElement);
const runButton = byId('run-button', HTMLButtonElement);
const cancelButton = byId('cancel', HTMLButtonElement);
const errorBox = byId('error', HTMLParagraphElement);
const runView = findRunView();

let client: Client | undefined;
let plan: { readonly canvasId: string; readonly variables: readonly PlanVariable[] } | undefined;
let planLoad: AbortController | undefined;
let run: Subscription | undefined;

function showError(error: unknown): void {
  errorBox.textContent = error instanceof Error ? error.message : String(error);
}

/** One run at a time: while it goes, nothing may replace the workflow, its plan or the client under it. */
function setRunning(running: boolean): void {
  searchButton.disabled = running;
  runButton.disabled = running;
  cancelButton.disabled = !running;
  workflowSelect.disabled = running;
}

async function loadPlan(api: Client): Promise<void> {
  // Only the latest choice matters: a slower answer for an earlier one must not overwrite it.
  planLoad?.abort();
  const load = new AbortController();
  planLoad = load;
  const canvasId = workflowSelect.value;
  plan = undefined;
  runButton.disabled = true;
  try {
    const { variables } = await api.workflows.get(canvasId, { signal: load.signal });
    plan = { canvasId, variables };
    renderVariableFields(variablesBox, variables);
    runButton.disabled = false;
  } catch (error) {
    if (!load.signal.aborted) showError(error);
  }
}

async function search(): Promise<void> {
  errorBox.textContent = '';
  const keyword = formText(connectionForm, 'keyword');
  try {
    // createClient checks its options at once (a key, an absolute base URL): a typo shows as an error here.
    const api = createClient({ apiKey: formText(connectionForm, 'apiKey'), baseUrl: formText(connectionForm, 'baseUrl') });
    client = api;
    const workflows = await api.workflows.search(keyword === '' ? {} : { keyword });
    workflowSelect.replaceChildren(...workflows.map((workflow) => new Option(workflow.title, workflow.canvasId)));
    workflowForm.hidden = workflows.length === 0;
    if (workflows.length === 0) showError(`No workflow matches “${keyword}”.`);
    else await loadPlan(api);
  } catch (error) {
    showError(error);
  }
}

function startRun(): void {
  if (client === undefined || plan === undefined) return;
  const api = client;
  const { canvasId } = plan;
  errorBox.textContent = '';
  setRunning(true);
  renderRunState(runView, { nodes: [], files: [], progress: { done: 0, total: 0 }, elapsedMs: 0 });
  run = defer(() => readVariables(variablesBox, (files) => api.files.upload(files)))
    .pipe(
      switchMap((variables) => api.run(canvasId, { variables })),
      toRunState(),
    )
    .subscribe({
      next: (state) => { renderRunState(runView, state); },
      error: (error: unknown) => {
        setRunning(false);
        // A failed workflow is already on screen from its `finished` state; anything else is not.
        if (isWorkflowFailedError(error)) return;
        renderRunEnd(runView, 'error', 'Stopped by an error (shown above).');
        showError(error);
      },
      complete: () => { setRunning(false); },
    });
}

function cancelRun(): void {
  // Unsubscribing before `finished` is what aborts the execution (DESIGN.md "Terminal semantics").
  run?.unsubscribe();
  run = undefined;
  setRunning(false);
  renderRunEnd(runView, 'cancelled', 'Cancelled: the execution was aborted.');
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
cancelButton.addEventListener('click', cancelRun);
