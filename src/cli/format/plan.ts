import type { PlanVariable, WorkflowPlan } from '../../index.js';
import type { Paint } from './paint.js';

function variableLine(variable: PlanVariable, paint: Paint): string {
  const facts = [
    variable.variableType ?? 'string',
    ...(variable.required ? [paint.bold('required')] : []),
    ...(variable.options === undefined ? [] : [`one of: ${variable.options.join(' | ')}`]),
  ];
  return `  ${paint.bold(variable.name)}  ${facts.join(', ')}`;
}

function runHint(canvasId: string, variables: readonly PlanVariable[]): string {
  const flags = variables.map((variable) => (variable.variableType === 'resource' ? `--file ${variable.name}=<path>` : `--var ${variable.name}=<value>`));
  return ['flowstream run', canvasId, ...flags].join(' ');
}

/**
 * A workflow's plan for people: its tasks in order with what each waits for, its variables, and the
 * command that runs it.
 */
export function planLines(canvasId: string, plan: WorkflowPlan, paint: Paint): readonly string[] {
  const titles = new Map(plan.tasks.map((task) => [task.id, task.title]));
  const tasks = plan.tasks.flatMap((task, index) => [
    `  ${index + 1}. ${paint.bold(task.title)}  ${paint.dim(task.id)}`,
    `     after: ${task.dependentTasks.length === 0 ? 'the start' : task.dependentTasks.map((id) => titles.get(id) ?? id).join(', ')}`,
    ...(task.toolsets.length === 0 ? [] : [`     tools: ${task.toolsets.join(', ')}`]),
    ...(task.prompt === '' || task.prompt === task.title ? [] : [`     prompt: ${task.prompt}`]),
  ]);
  return [
    `${paint.bold(plan.title)}  ${paint.dim(canvasId)}`,
    '',
    `Tasks (${plan.tasks.length}):`,
    ...(tasks.length === 0 ? ['  none'] : tasks),
    '',
    `Variables (${plan.variables.length}):`,
    ...(plan.variables.length === 0 ? ['  none'] : plan.variables.map((variable) => variableLine(variable, paint))),
    '',
    `Run it: ${runHint(canvasId, plan.variables)}`,
  ];
}
