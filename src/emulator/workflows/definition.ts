/**
 * The format of a user-defined workflow: a plain object (or the same thing as JSON).
 * All durations and offsets are in emulator milliseconds (they shrink with `speed`).
 *
 * @example
 * const definition: WorkflowDefinition = {
 *   canvasId: 'c-my-chain',
 *   title: 'Summarise then translate',
 *   nodes: [
 *     { id: 'node-start', type: 'start' },
 *     { id: 'node-summary', title: 'Summarise', parents: ['node-start'], durationMs: 4_000,
 *       messages: [{ content: 'A short summary.' }] },
 *     { id: 'node-translate', title: 'Translate', parents: ['node-summary'], durationMs: 3_000,
 *       messages: [{ content: 'Un court résumé.', reasoning: 'French was asked for.' }],
 *       files: [{ name: 'summary.md', type: 'text/markdown', content: '# Summary' }] },
 *   ],
 *   variables: [{ name: 'language', variableType: 'option', options: ['fr', 'de'] }],
 * };
 */
export interface WorkflowDefinition {
  /** Canvas id (`c-…` by convention); generated when absent. Must be unique in the emulator. */
  readonly canvasId?: string;
  /** Title; an empty or absent title reads `Untitled` in search (service.md §5.1). */
  readonly title?: string;
  /** The nodes of the DAG; may be empty (the run then finishes at once, service.md §3.1). */
  readonly nodes: readonly NodeDefinition[];
  /** Workflow variables, as shown by the detail endpoint. */
  readonly variables?: readonly VariableDefinition[];
}

/**
 * Content node types (service.md §3.2): no work of their own. On the service such a node is `init`
 * until a task among its parents finishes, then `finish` on the next poll tick (at once when it has
 * no parents; never when none of its parents is a task). In the `spec` profile, `finish` from the start.
 */
export const CONTENT_NODE_TYPES = ['document', 'image', 'codeArtifact', 'video', 'audio'] as const;

/**
 * Node types that do no work (no duration, messages, files or failure): `start`, `memo`, `resource`
 * and `group` are `finish` from the start (service.md §3.2); the {@link CONTENT_NODE_TYPES} follow their task.
 */
export const NO_WORK_NODE_TYPES = ['start', 'memo', 'resource', 'group', ...CONTENT_NODE_TYPES] as const;

/** A node type: `task` (produces messages and files) or one of {@link NO_WORK_NODE_TYPES}. */
export type NodeType = 'task' | (typeof NO_WORK_NODE_TYPES)[number];

/** One node of a workflow. */
export interface NodeDefinition {
  /** Node id (`node-…` by convention), unique within the workflow. */
  readonly id: string;
  /** Default `task`. */
  readonly type?: NodeType;
  /** Default: the id. */
  readonly title?: string;
  /** Task instruction shown in the plan; default: the title. */
  readonly prompt?: string;
  /** Toolsets shown in the plan; default none. */
  readonly toolsets?: readonly string[];
  /** Ids of the nodes this one depends on; it starts when all of them are `finish`. */
  readonly parents?: readonly string[];
  /** How long a task node works, in emulator ms; default 5 000. Ignored for no-work nodes. */
  readonly durationMs?: number;
  /**
   * Makes the duration vary from one execution to the next: the coefficient of variation (standard
   * deviation ÷ mean, 0–3) of a log-normal whose mean is `durationMs`. Default 0: always `durationMs`.
   * Draws are seeded by canvas, node and the execution's rank among the canvas's executions, so the
   * same starts in the same order meet the same durations. Message and failure times scale with the
   * drawn duration.
   */
  readonly durationCv?: number;
  /** Messages the task writes while it works. */
  readonly messages?: readonly MessageDefinition[];
  /** Files the task produces; visible once it is `finish` (service.md §4.6). */
  readonly files?: readonly FileDefinition[];
  /** Makes the task fail instead of finishing. */
  readonly failure?: FailureDefinition;
}

/** One AI message of a task node. */
export interface MessageDefinition {
  /** Final content of the message. */
  readonly content: string;
  /** Reasoning text; default `""`; `null` is passed through as the service sometimes does (service.md §4.5). */
  readonly reasoning?: string | null;
  /** Default `ai`. */
  readonly type?: 'ai' | 'tool';
  /**
   * Offset from the node's start at which the message is complete, in emulator ms, at most the
   * node's duration. Default: messages spread evenly over the duration.
   */
  readonly atMs?: number;
}

/** An output file of a task node. Give `content` (served as UTF-8) or `size` (filler bytes). */
export interface FileDefinition {
  readonly name: string;
  /** MIME type, e.g. `text/markdown`. */
  readonly type: string;
  readonly content?: string;
  /**
   * Size in bytes when no content is given. An `image/png` is then a real picture (a small bar chart)
   * padded to this size when it is 255 bytes or more (a smaller size gives the bare picture, 243 bytes).
   */
  readonly size?: number;
}

/**
 * How a task node fails. `error`: after `atMs` (default: its full duration) with the given errors,
 * reported as a JSON-encoded array (service.md §4.3). `credit`: at its start with the plain
 * `credit not available: …` text (service.md §3.7).
 */
export type FailureDefinition =
  | { readonly kind: 'error'; readonly errors?: readonly string[]; readonly atMs?: number }
  | { readonly kind: 'credit' };

/** A workflow variable. `resource` variables take uploaded fileKeys (service.md §5.5). */
export interface VariableDefinition {
  readonly name: string;
  /** Default `string`. */
  readonly variableType?: 'string' | 'option' | 'resource';
  /** Default false (service.md §5.2). */
  readonly required?: boolean;
  /** Allowed values of an `option` variable. */
  readonly options?: readonly string[];
}
