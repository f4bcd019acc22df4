import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { OutputNode, RunResult } from '../domain/model.js';
import { isFlowstreamError } from '../errors/flowstream-error.js';

/** The text a node wrote: its messages' contents, in order, without the empty ones. */
function nodeText(node: OutputNode): string {
  return node.messages.map((message) => message.content).filter((content) => content.trim() !== '').join('\n\n');
}

function headline(result: RunResult): string {
  const run = `Execution ${result.executionId}${result.canvasId === undefined ? '' : ` of ${result.canvasId}`}`;
  switch (result.endedBy) {
    case 'finish':
      return `${run} finished.`;
    case 'failed':
      return `${run} failed.`;
    case 'aborted':
      return `${run} was aborted.`;
    case 'timeout':
      return `${run} timed out and was aborted.`;
    default:
      return result.endedBy satisfies never;
  }
}

/**
 * A run's result as a tool's result: the text of every node that wrote some (under its title), the
 * failed nodes' errors, and each output file as a `resource_link` to its public URL (a file without
 * one is named in the text). A failed run is a tool error (`isError`), so that the caller does not
 * take a partial output for the answer.
 *
 * @example
 * ```ts
 * const result = await runResult(client.run('c-1', {}, { failOnWorkflowError: false }));
 * return runToolResult(result);
 * ```
 */
export function runToolResult(result: RunResult): CallToolResult {
  const sections = [headline(result)];
  for (const node of result.failedNodes) sections.push(`Failed: ${node.title ?? node.nodeId}: ${node.error?.message ?? 'no reason given'}`);
  for (const node of result.output) {
    const text = nodeText(node);
    if (text !== '') sections.push(`## ${node.title ?? node.nodeId}\n\n${text}`);
  }
  const unlinked = result.files.filter((file) => file.url === undefined);
  if (unlinked.length > 0) sections.push(`Files without a link: ${unlinked.map((file) => file.name).join(', ')}`);
  return {
    content: [
      { type: 'text', text: sections.join('\n\n') },
      ...result.files.flatMap((file) =>
        file.url === undefined ? [] : [{ type: 'resource_link' as const, uri: file.url, name: file.name, mimeType: file.type, ...(file.size === undefined ? {} : { size: file.size }) }],
      ),
    ],
    ...(result.status === 'failed' ? { isError: true } : {}),
  };
}

/**
 * A failure of a tool call as its result (`isError`), never a crash of the server: the error's own
 * message (a flowstream error never shows the API key), and the execution's id when one was started,
 * so that the caller can follow it up.
 */
export function errorToolResult(error: unknown): CallToolResult {
  const message = error instanceof Error ? error.message : String(error);
  const executionId = isFlowstreamError(error) ? error.executionId : undefined;
  const text = executionId === undefined || message.includes(executionId) ? message : `${message} (execution ${executionId})`;
  return { content: [{ type: 'text', text }], isError: true };
}
