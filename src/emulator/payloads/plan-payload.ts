import type { Workflow } from '../workflows/workflow.js';
import { isTaskNode } from '../workflows/workflow.js';

/** A workflow plan (spec §2.3) derived from the DAG, as detail and copilot answer it (service.md §5.2). */
export function planPayload(workflow: Workflow): Record<string, unknown> {
  const tasks = workflow.nodes.filter(isTaskNode);
  const taskIds = new Set(tasks.map((task) => task.id));
  return {
    title: workflow.title,
    tasks: tasks.map((task) => {
      // service.md §5.2: only task→task edges, omitted when empty.
      const dependentTasks = task.parents.filter((parent) => taskIds.has(parent));
      return {
        id: task.id,
        title: task.title,
        prompt: task.prompt,
        toolsets: task.toolsets,
        ...(dependentTasks.length === 0 ? {} : { dependentTasks }),
      };
    }),
    variables: workflow.variables.map((variable) => ({
      name: variable.name,
      variableType: variable.variableType,
      required: variable.required,
      // service.md §5.2: `options` only when non-empty.
      ...(variable.options.length === 0 ? {} : { options: variable.options }),
    })),
  };
}
