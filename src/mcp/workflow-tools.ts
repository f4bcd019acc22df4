import type { WorkflowPlan } from '../domain/model.js';
import { GENERAL_TOOL_NAMES, uniqueToolNames } from './tool-names.js';

/**
 * A workflow served as a tool of its own: its canvas, and optionally the tool's name (otherwise made
 * from the workflow's title) and description (otherwise made from its plan).
 *
 * @example
 * ```ts
 * const newsletter: WorkflowToolConfig = { canvasId: 'c-sample-variables', tool: 'newsletter' };
 * ```
 */
export interface WorkflowToolConfig {
  readonly canvasId: string;
  readonly tool?: string;
  readonly description?: string;
}

/** A configured workflow with its plan and the tool's final name and description. */
export interface WorkflowTool {
  readonly name: string;
  readonly canvasId: string;
  readonly title: string;
  readonly description: string;
  readonly plan: WorkflowPlan;
}

/** The longest task list a made-up description spells out. */
const LISTED_TASKS = 8;

/** What a tool of `plan` does, for a model choosing among tools: its title, its steps, what it takes. */
function describePlan(canvasId: string, plan: WorkflowPlan): string {
  const title = plan.title.trim() === '' ? canvasId : plan.title.trim();
  const tasks = plan.tasks.slice(0, LISTED_TASKS).map((task) => task.title.trim()).filter((task) => task !== '');
  const more = plan.tasks.length > LISTED_TASKS ? `, and ${plan.tasks.length - LISTED_TASKS} more` : '';
  return [
    `Runs the hosted workflow "${title}" (${canvasId}) and returns its output text and files.`,
    ...(tasks.length === 0 ? [] : [`Steps: ${tasks.join('; ')}${more}.`]),
    plan.variables.length === 0 ? 'It takes no input.' : 'Its input is the workflow\'s variables.',
  ].join(' ');
}

/**
 * The tools of the configured workflows, in order, with their plans: names as configured, or made
 * from the workflow's title, sanitised and unique (apart from the general tools'), descriptions as
 * configured or made from the plan.
 *
 * @example
 * ```ts
 * workflowTools([{ canvasId: 'c-1' }], new Map([['c-1', await client.workflows.get('c-1')]]));
 * ```
 */
export function workflowTools(configs: readonly WorkflowToolConfig[], plans: ReadonlyMap<string, WorkflowPlan>): WorkflowTool[] {
  const planned = configs.map((config) => {
    const plan = plans.get(config.canvasId);
    if (plan === undefined) throw new RangeError(`No plan of ${config.canvasId} was read.`);
    return { config, plan };
  });
  const names = uniqueToolNames(
    planned.map(({ config, plan }) => config.tool ?? (plan.title.trim() === '' ? config.canvasId : plan.title.toLowerCase())),
    GENERAL_TOOL_NAMES,
  );
  return planned.map(({ config, plan }, index) => ({
    name: names[index] ?? config.canvasId,
    canvasId: config.canvasId,
    title: plan.title.trim() === '' ? config.canvasId : plan.title.trim(),
    description: config.description ?? describePlan(config.canvasId, plan),
    plan,
  }));
}
