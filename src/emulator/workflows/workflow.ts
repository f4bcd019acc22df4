import type { NodeType } from './definition.js';
import { CONTENT_NODE_TYPES } from './definition.js';

/** A validated workflow with every default filled in; nodes are in topological order. */
export interface Workflow {
  readonly canvasId: string;
  /** As given; may be empty (search shows `Untitled`). */
  readonly title: string;
  readonly nodes: readonly WorkflowNode[];
  readonly variables: readonly WorkflowVariable[];
}

export interface WorkflowNode {
  readonly id: string;
  readonly type: NodeType;
  readonly title: string;
  readonly prompt: string;
  readonly toolsets: readonly string[];
  readonly parents: readonly string[];
  /** 0 for no-work nodes; the mean when `durationCv` is not 0. */
  readonly durationMs: number;
  /** Coefficient of variation of the duration from execution to execution; 0: fixed (and for no-work nodes). */
  readonly durationCv: number;
  readonly messages: readonly ScriptedMessage[];
  readonly files: readonly ScriptedFile[];
  readonly failure: ScriptedFailure | undefined;
}

export interface ScriptedMessage {
  readonly content: string;
  readonly reasoning: string | null;
  readonly type: 'ai' | 'tool';
  /** Offset from the node's start when the message is complete. */
  readonly atMs: number;
}

export interface ScriptedFile {
  readonly name: string;
  readonly type: string;
  readonly bytes: Uint8Array<ArrayBuffer>;
}

export type ScriptedFailure =
  | { readonly kind: 'error'; readonly errors: readonly string[]; readonly atMs: number }
  | { readonly kind: 'credit' };

export interface WorkflowVariable {
  readonly name: string;
  readonly variableType: 'string' | 'option' | 'resource';
  readonly required: boolean;
  readonly options: readonly string[];
}

/** Whether a node does work (messages, files) or is `finish` from the start (service.md §3.2). */
export const isTaskNode = (node: WorkflowNode): boolean => node.type === 'task';

const CONTENT_TYPES: ReadonlySet<NodeType> = new Set(CONTENT_NODE_TYPES);

/** Whether a node is a content node (document, image, code artifact, video, audio; service.md §3.2). */
export const isContentNode = (node: WorkflowNode): boolean => CONTENT_TYPES.has(node.type);
