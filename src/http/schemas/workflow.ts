// A namespace import, so that a bundler keeps only the zod functions used here.
import * as z from 'zod/mini';
import type { GeneratedWorkflow, PlanTask, PlanVariable, UploadedFile, VariableType, WorkflowPlan, WorkflowSummary } from '../../domain/model.js';

/** One search result; untitled workflows read `Untitled` on the service (service.md §5.1). */
export const workflowSummariesSchema: z.ZodMiniType<WorkflowSummary[]> = z.array(
  z.pipe(
    z.object({ canvasId: z.string().check(z.minLength(1)), title: z.nullish(z.string()) }),
    z.transform(({ canvasId, title }) => ({ canvasId, title: title ?? 'Untitled' })),
  ),
);

const taskSchema: z.ZodMiniType<PlanTask> = z.pipe(
  z.object({
    id: z.string(),
    title: z.nullish(z.string()),
    prompt: z.nullish(z.string()),
    toolsets: z.nullish(z.array(z.string())),
    // service.md §5.2: task→task edges only, omitted when empty.
    dependentTasks: z.nullish(z.array(z.string())),
  }),
  z.transform(({ id, title, prompt, toolsets, dependentTasks }) => ({
    id,
    title: title ?? '',
    prompt: prompt ?? '',
    toolsets: toolsets ?? [],
    dependentTasks: dependentTasks ?? [],
  })),
);

const VARIABLE_TYPES: ReadonlySet<unknown> = new Set<VariableType>(['string', 'option', 'resource']);

const isVariableType = (value: unknown): value is VariableType => VARIABLE_TYPES.has(value);

const variableSchema: z.ZodMiniType<PlanVariable> = z.pipe(
  z.object({
    name: z.string(),
    // Checked in the transform, not by `z.catch(z.enum(…))`: an unknown type is dropped rather than
    // failing the whole plan, and zod/mini's `catch` alone adds about 10 KB (minified) of zod's
    // utilities to the browser bundle.
    variableType: z.unknown(),
    required: z.nullish(z.boolean()),
    options: z.nullish(z.array(z.string())),
  }),
  z.transform(({ name, variableType, required, options }) => ({
    name,
    ...(isVariableType(variableType) ? { variableType } : {}),
    // service.md §5.2: `required` defaults to false; `options` only when non-empty.
    required: required ?? false,
    ...(options === undefined || options === null ? {} : { options }),
  })),
);

/** A workflow plan (spec §2.3), from detail and copilot. */
export const workflowPlanSchema: z.ZodMiniType<WorkflowPlan> = z.pipe(
  z.object({ title: z.nullish(z.string()), tasks: z.array(taskSchema), variables: z.nullish(z.array(variableSchema)) }),
  z.transform(({ title, tasks, variables }) => ({ title: title ?? 'Untitled', tasks, variables: variables ?? [] })),
);

/** Copilot generation data (spec §4.8). */
export const generatedWorkflowSchema: z.ZodMiniType<GeneratedWorkflow> = z.object({ canvasId: z.string().check(z.minLength(1)), workflowPlan: workflowPlanSchema });

/** Upload data (spec §4.7): keys are strict, since a run needs them. */
export const uploadedFilesSchema: z.ZodMiniType<UploadedFile[]> = z.pipe(
  z.object({ files: z.array(z.object({ fileKey: z.string().check(z.minLength(1)), fileName: z.string() })) }),
  z.transform(({ files }) => files),
);
