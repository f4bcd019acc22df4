import { z } from 'zod';
import type { GeneratedWorkflow, PlanTask, PlanVariable, UploadedFile, WorkflowPlan, WorkflowSummary } from '../model.js';

/**
 * One search result; untitled workflows read `Untitled` on the service (PROTOCOL §5.1).
 *
 * @example
 * ```ts
 * workflowSummariesSchema.parse([{ canvasId: 'c-1', title: null }])[0]?.title; // 'Untitled'
 * ```
 */
export const workflowSummariesSchema: z.ZodType<WorkflowSummary[]> = z.array(
  z.object({ canvasId: z.string().min(1), title: z.string().nullish() }).transform(({ canvasId, title }) => ({ canvasId, title: title ?? 'Untitled' })),
);

const taskSchema: z.ZodType<PlanTask> = z
  .object({
    id: z.string(),
    title: z.string().nullish(),
    prompt: z.string().nullish(),
    toolsets: z.array(z.string()).nullish(),
    // PROTOCOL §5.2: task→task edges only, omitted when empty.
    dependentTasks: z.array(z.string()).nullish(),
  })
  .transform(({ id, title, prompt, toolsets, dependentTasks }) => ({
    id,
    title: title ?? '',
    prompt: prompt ?? '',
    toolsets: toolsets ?? [],
    dependentTasks: dependentTasks ?? [],
  }));

const variableSchema: z.ZodType<PlanVariable> = z
  .object({
    name: z.string(),
    // An unknown type is dropped rather than failing the whole plan.
    variableType: z.enum(['string', 'option', 'resource']).nullish().catch(undefined),
    required: z.boolean().nullish(),
    options: z.array(z.string()).nullish(),
  })
  .transform(({ name, variableType, required, options }) => ({
    name,
    ...(variableType === undefined || variableType === null ? {} : { variableType }),
    // PROTOCOL §5.2: `required` defaults to false; `options` only when non-empty.
    required: required ?? false,
    ...(options === undefined || options === null ? {} : { options }),
  }));

/**
 * A workflow plan (spec §2.3), from detail and copilot.
 *
 * @example
 * ```ts
 * workflowPlanSchema.parse({ title: 'T', tasks: [] }).variables; // []
 * ```
 */
export const workflowPlanSchema: z.ZodType<WorkflowPlan> = z
  .object({ title: z.string().nullish(), tasks: z.array(taskSchema), variables: z.array(variableSchema).nullish() })
  .transform(({ title, tasks, variables }) => ({ title: title ?? 'Untitled', tasks, variables: variables ?? [] }));

/**
 * Copilot generation data (spec §4.8).
 *
 * @example
 * ```ts
 * generatedWorkflowSchema.parse({ canvasId: 'c-1', workflowPlan: { title: 'T', tasks: [] } });
 * ```
 */
export const generatedWorkflowSchema: z.ZodType<GeneratedWorkflow> = z.object({ canvasId: z.string().min(1), workflowPlan: workflowPlanSchema });

/**
 * Upload data (spec §4.7): keys are strict, since a run needs them.
 *
 * @example
 * ```ts
 * uploadedFilesSchema.parse({ files: [{ fileKey: 'of_x', fileName: 'a.txt' }] });
 * ```
 */
export const uploadedFilesSchema: z.ZodType<UploadedFile[]> = z
  .object({ files: z.array(z.object({ fileKey: z.string().min(1), fileName: z.string() })) })
  .transform(({ files }) => files);
