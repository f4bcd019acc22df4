/**
 * The domain model of the Workflow API as flowstream exposes it: what the http layer's zod schemas
 * produce after normalising the service's loose payloads (service.md §3.1, §4). Every layer speaks these
 * types, never the raw JSON; this is the bottom floor, importing nothing.
 */

/**
 * Execution statuses of the spec (§2.4); `unknown` keeps a value we do not know without crashing a poll.
 *
 * @example
 * ```ts
 * if (snapshot.status === 'unknown') logger.warn(`new status ${snapshot.rawStatus}`);
 * ```
 */
export type ExecutionStatus = 'init' | 'executing' | 'finish' | 'failed' | 'unknown';

/**
 * Node statuses of the spec (§2.4); `waiting` never occurs on the service (service.md §3.1) but is accepted.
 *
 * @example
 * ```ts
 * const done = snapshot.nodes.filter((node) => node.status === 'finish').length;
 * ```
 */
export type NodeStatus = 'init' | 'waiting' | 'executing' | 'finish' | 'failed' | 'unknown';

/**
 * Message kinds (spec §2.5); `tool` practically never appears (service.md §4.5).
 *
 * @example
 * ```ts
 * const text = node.messages.filter((m) => m.type === 'ai').map((m) => m.content).join('');
 * ```
 */
export type MessageType = 'ai' | 'tool' | 'unknown';

/**
 * A node's error, cleaned of the service's varying formats (service.md §4.3), with the raw text kept.
 *
 * @example
 * ```ts
 * const failed = snapshot.nodes.filter((n) => n.error !== undefined).map((n) => n.error?.message);
 * ```
 */
export interface NodeError {
  /** One readable message (several JSON-array entries are joined with `; `). */
  readonly message: string;
  /** Each message of a JSON-array `errorMessage`, or the plain text as the only entry. */
  readonly messages: readonly string[];
  /** Exactly what the service sent. */
  readonly raw: string;
}

/**
 * The answer of `POST /openapi/workflow/{canvasId}/run`. `running` is read as `executing` (service.md §3.1).
 *
 * @example
 * ```ts
 * const { executionId } = await client.executions.start('c-1');
 * ```
 */
export interface StartedExecution {
  readonly executionId: string;
  readonly status: ExecutionStatus;
  /** The status string as sent (`running` on the service). */
  readonly rawStatus: string;
}

/**
 * One entry of `nodeExecutions` (service.md §4.1: every node, parents before children).
 *
 * @example
 * ```ts
 * for (const node of snapshot.nodes) console.log(node.title ?? node.nodeId, node.status);
 * ```
 */
export interface NodeExecution {
  readonly nodeId: string;
  readonly status: NodeStatus;
  readonly rawStatus: string;
  readonly title?: string;
  readonly error?: NodeError;
}

/**
 * The answer of `GET /openapi/workflow/{executionId}/status`.
 *
 * @example
 * ```ts
 * const snapshot: ExecutionSnapshot = await client.executions.status(executionId);
 * ```
 */
export interface ExecutionSnapshot {
  readonly executionId: string;
  readonly status: ExecutionStatus;
  readonly rawStatus: string;
  readonly createdAt?: string;
  readonly nodes: readonly NodeExecution[];
}

/**
 * One message of an output node (spec §2.5). `content`/`reasoningContent` are `''` when absent or null.
 *
 * @example
 * ```ts
 * const last = output.output[0]?.messages.at(-1)?.content;
 * ```
 */
export interface OutputMessage {
  readonly messageId: string;
  readonly type: MessageType;
  readonly rawType: string;
  readonly content: string;
  readonly reasoningContent: string;
}

/**
 * One task node of the output endpoint (service.md §4.2).
 *
 * @example
 * ```ts
 * const texts = output.output.map((node) => node.messages.map((m) => m.content).join('\n'));
 * ```
 */
export interface OutputNode {
  readonly nodeId: string;
  readonly title?: string;
  readonly status: NodeStatus;
  readonly rawStatus: string;
  readonly error?: NodeError;
  readonly startTime?: string;
  readonly endTime?: string;
  readonly messages: readonly OutputMessage[];
}

/**
 * An output file (service.md §4.6: `size` in bytes, `url` public and never to be sent the API key).
 *
 * @example
 * ```ts
 * for (const file of output.files) await downloadFile(file);
 * ```
 */
export interface OutputFile {
  readonly name: string;
  readonly type: string;
  readonly size?: number;
  readonly nodeId?: string;
  readonly url?: string;
}

/**
 * The answer of `GET /openapi/workflow/{executionId}/output`.
 *
 * @example
 * ```ts
 * const { output, files } = await client.executions.output(executionId);
 * ```
 */
export interface ExecutionOutput {
  readonly output: readonly OutputNode[];
  readonly files: readonly OutputFile[];
}

/**
 * A search result item (spec §2.2).
 *
 * @example
 * ```ts
 * const [first] = await client.workflows.search({ keyword: 'report' });
 * ```
 */
export interface WorkflowSummary {
  readonly canvasId: string;
  readonly title: string;
}

/**
 * How a workflow variable takes its value (spec §2.3); `resource` takes uploaded fileKeys.
 *
 * @example
 * ```ts
 * const files = plan.variables.filter((v) => v.variableType === 'resource');
 * ```
 */
export type VariableType = 'string' | 'option' | 'resource';

/**
 * One task of a workflow plan (spec §2.3).
 *
 * @example
 * ```ts
 * const order = plan.tasks.map((task) => `${task.title} after ${task.dependentTasks.join(', ')}`);
 * ```
 */
export interface PlanTask {
  readonly id: string;
  readonly title: string;
  readonly prompt: string;
  readonly toolsets: readonly string[];
  /** Task→task edges only; `[]` when the service omits the field (service.md §5.2). */
  readonly dependentTasks: readonly string[];
}

/**
 * One variable of a workflow plan (spec §2.3).
 *
 * @example
 * ```ts
 * const missing = plan.variables.filter((v) => v.required && !(v.name in variables));
 * ```
 */
export interface PlanVariable {
  readonly name: string;
  readonly variableType?: VariableType;
  /** Defaults to false (service.md §5.2). */
  readonly required: boolean;
  readonly options?: readonly string[];
}

/**
 * A workflow's plan (spec §2.3), from detail or copilot.
 *
 * @example
 * ```ts
 * const plan = await client.workflows.get('c-1');
 * ```
 */
export interface WorkflowPlan {
  readonly title: string;
  readonly tasks: readonly PlanTask[];
  readonly variables: readonly PlanVariable[];
}

/**
 * An uploaded file's key, to pass as a variable value (spec §2.6, service.md §5.5–5.6).
 *
 * @example
 * ```ts
 * const [file] = await client.files.upload([new File([bytes], 'in.pdf')]);
 * ```
 */
export interface UploadedFile {
  readonly fileKey: string;
  readonly fileName: string;
}

/**
 * The answer of copilot generation.
 *
 * @example
 * ```ts
 * const { canvasId, workflowPlan } = await client.copilot.generate({ query: 'Summarise a PDF' });
 * ```
 */
export interface GeneratedWorkflow {
  readonly canvasId: string;
  readonly workflowPlan: WorkflowPlan;
}

/**
 * Values a workflow variable may take (spec §4.1 rule 1).
 *
 * @example
 * ```ts
 * const value: VariableValue = { language: 'fr', depth: 2 };
 * ```
 */
export type VariableValue = string | number | boolean | null | readonly VariableValue[] | { readonly [key: string]: VariableValue };

/**
 * The variables of a run, by name (sent as `{variables}`, service.md §5.4).
 *
 * @example
 * ```ts
 * await client.executions.start('c-1', { variables: { topic: 'rxjs', files: [fileKey] } });
 * ```
 */
export type Variables = Readonly<Record<string, VariableValue>>;

/**
 * Where flowstream reports what it cannot throw (a warning about an `of_` text variable, an unknown status).
 *
 * @example
 * ```ts
 * createHttpClient({ apiKey, baseUrl, logger: console });
 * ```
 */
export interface Logger {
  debug?(message: string, meta?: Readonly<Record<string, unknown>>): void;
  warn(message: string, meta?: Readonly<Record<string, unknown>>): void;
  error?(message: string, meta?: Readonly<Record<string, unknown>>): void;
}

/**
 * Why a run ended (see `RunResult.endedBy`).
 *
 * @example
 * ```ts
 * const ending: RunEnding = result.endedBy; // 'finish' | 'failed' | 'aborted' | 'timeout'
 * ```
 */
export type RunEnding = 'finish' | 'failed' | 'aborted' | 'timeout';

/**
 * How a run ended: the last status, every node, the final output and files.
 *
 * @example
 * ```ts
 * const result: RunResult = await runResult(client.run('c-1'));
 * ```
 */
export interface RunResult {
  readonly executionId: string;
  readonly canvasId?: string;
  readonly status: 'finish' | 'failed';
  /**
   * Why the run ended: the execution's own end (`finish`, `failed`), or an abort by this client that
   * ended it — `aborted` (a run handle's `cancel()`) or `timeout` (a run handle's `timeoutMs`). The
   * service has no aborted status (service.md §3.5): an aborted execution reads `failed`.
   */
  readonly endedBy: RunEnding;
  readonly nodes: readonly NodeExecution[];
  readonly output: readonly OutputNode[];
  readonly files: readonly OutputFile[];
  /** The nodes that ended `failed`, with their errors (abort and timeouts included, service.md §3.5–3.6). */
  readonly failedNodes: readonly NodeExecution[];
  /**
   * Nodes still running when the execution was already `failed`: a failed node fails the execution at
   * once while other branches go on (service.md §3.3). Empty otherwise; see `RunOptions.onFailedBranches`.
   */
  readonly runningNodes: readonly NodeExecution[];
}
