import * as z from 'zod/mini';
import type { PlanVariable, WorkflowPlan } from '../domain/model.js';

/** A fileKey of an uploaded file (service.md §5.5). */
const FILE_KEY = z.string().check(z.startsWith('of_', 'expected the fileKey of an uploaded file (of_…)'));

function variableSchema(variable: PlanVariable): z.ZodMiniType {
  switch (variable.variableType) {
    case 'option':
      return variable.options === undefined || variable.options.length === 0 ? z.string() : z.enum(variable.options as [string, ...string[]]);
    case 'resource':
      return z.union([FILE_KEY, z.array(FILE_KEY)]);
    case 'string':
    case undefined:
      return z.string();
    default:
      return variable.variableType satisfies never;
  }
}

/**
 * The input of a workflow's tool: one property per variable of its plan, required as the plan says,
 * and no other (a name the plan does not have is refused before anything is started).
 */
export function planInputSchema(plan: WorkflowPlan): z.ZodMiniObject {
  return z.strictObject(
    Object.fromEntries(plan.variables.map((variable) => {
      const schema = variableSchema(variable);
      return [variable.name, variable.required ? schema : z.optional(schema)];
    })),
  );
}
