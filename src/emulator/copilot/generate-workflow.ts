import { graphemes } from '../graphemes.js';
import type { Workflow, WorkflowNode } from '../workflows/workflow.js';
import { vocabularyFor } from './vocabulary.js';

/** How long a generated task works, in emulator ms. */
const GENERATED_TASK_DURATION_MS = 4_000;
const CLAUSE_BREAK = /[.!?;\n。！？；]+|,?\s+(?:then|and then|after that|finally)\s+/i;
const HAS_WORDS = /[\p{L}\p{N}]/u;
const PLACEHOLDER = /\{\{\s*([\p{L}\p{N}_-]+)\s*\}\}/gu;

/** Keywords that select a toolset, checked in order. */
const TOOLSET_HINTS: readonly (readonly [RegExp, string])[] = [
  [/\b(search|research|look up|find|browse|web)\b/i, 'web_search'],
  [/\b(image|picture|photo|illustration|draw)\b/i, 'image_generation'],
  [/\b(code|script|calculate|compute|analy[sz]e)\b/i, 'execute_code'],
  [/\b(e-?mail|send)\b/i, 'send_email'],
];

/**
 * Builds a workflow from a prompt without any model: one task per sentence or clause, each
 * depending on the one before, titled in the requested locale where a translation exists, and one
 * string variable per `{{placeholder}}`. Undefined when the prompt has no clause with words in it.
 */
export function generateWorkflow(canvasId: string, query: string, locale: string | undefined): Workflow | undefined {
  const clauses = query
    .split(CLAUSE_BREAK)
    .map((clause) => clause.trim())
    .filter((clause) => HAS_WORDS.test(clause));
  const first = clauses[0];
  if (first === undefined) return undefined;
  const words = vocabularyFor(locale);
  const start: WorkflowNode = {
    id: 'node-start',
    type: 'start',
    title: 'Start',
    prompt: 'Start',
    toolsets: [],
    parents: [],
    durationMs: 0,
    durationCv: 0,
    messages: [],
    files: [],
    failure: undefined,
  };
  const tasks = clauses.map((clause, index): WorkflowNode => ({
    id: `node-task-${String(index + 1)}`,
    type: 'task',
    title: `${words.step} ${String(index + 1)}: ${shorten(clause, 60)}`,
    prompt: clause,
    toolsets: TOOLSET_HINTS.filter(([hint]) => hint.test(clause)).map(([, toolset]) => toolset),
    parents: [index === 0 ? start.id : `node-task-${String(index)}`],
    durationMs: GENERATED_TASK_DURATION_MS,
    durationCv: 0,
    messages: [{ content: `${clause}: done.`, reasoning: '', type: 'ai', atMs: GENERATED_TASK_DURATION_MS }],
    files: [],
    failure: undefined,
  }));
  const names = [...new Set([...query.matchAll(PLACEHOLDER)].map((match) => match[1] ?? ''))];
  return {
    canvasId,
    title: `${words.workflow}: ${shorten(first, 50)}`,
    nodes: [start, ...tasks],
    variables: names.map((name) => ({ name, variableType: 'string', required: false, options: [] })),
  };
}

function shorten(text: string, max: number): string {
  const chars = graphemes(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('').trimEnd()}…`;
}
