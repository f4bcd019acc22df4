import type { Workflow, WorkflowNode } from '../workflows/workflow.js';
import { drawDurationMs } from './duration-draw.js';

/**
 * The workflow as one execution runs it: every task node with a `durationCv` takes its drawn duration
 * (`duration-draw.ts`), and its message and failure times scale by drawn ÷ mean, so that a message
 * scripted half-way through still comes half-way through and nothing is timed after the node's end.
 * Done before the timeline is planned, so the engine (timeline, snapshot, messages) reads one fixed
 * script per execution, as it always has; `ordinal` is the execution's rank among the canvas's runs.
 */
export function drawnWorkflow(workflow: Workflow, ordinal: number): Workflow {
  if (workflow.nodes.every((node) => node.durationCv === 0)) return workflow;
  return { ...workflow, nodes: workflow.nodes.map((node) => drawnNode(node, workflow.canvasId, ordinal)) };
}

function drawnNode(node: WorkflowNode, canvasId: string, ordinal: number): WorkflowNode {
  const meanMs = node.durationMs;
  const durationMs = drawDurationMs({ canvasId, nodeId: node.id, ordinal, meanMs, cv: node.durationCv });
  if (durationMs === meanMs) return node;
  // atMs ≤ meanMs (checked when the definition was parsed), so a scaled time stays ≤ durationMs; rounding keeps the order.
  const scaled = (atMs: number): number => Math.round((atMs * durationMs) / meanMs);
  const failure = node.failure?.kind === 'error' ? { ...node.failure, atMs: scaled(node.failure.atMs) } : node.failure;
  return { ...node, durationMs, messages: node.messages.map((message) => ({ ...message, atMs: scaled(message.atMs) })), failure };
}
