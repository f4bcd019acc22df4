import type { OutputMessage, RunResult } from '../domain/model.js';

/**
 * Where to read a step's text: one node (`nodeId`), or by default the last AI message of the run.
 *
 * @example
 * ```ts
 * outputText(result, { nodeId: 'node-summary' });
 * ```
 */
export interface OutputTextOptions {
  /** Read this task node's AI messages, joined with a blank line, instead of the last AI message. */
  readonly nodeId?: string;
}

function aiMessages(messages: readonly OutputMessage[]): readonly OutputMessage[] {
  return messages.filter((message) => message.type === 'ai');
}

/**
 * The text a run produced, to pass on to the next step: the AI messages of one node, or the last AI
 * message of the whole run (the output lists task nodes parents first, service.md §4.1–4.2, so the last
 * one is the most downstream answer). `''` when there is none; tool messages practically never
 * appear (service.md §4.5) and are left out.
 *
 * @example
 * ```ts
 * client.run('c-summary').pipe(thenRun(client, 'c-translate', (result) => ({ variables: { text: outputText(result) } })));
 * ```
 */
export function outputText(result: RunResult, options: OutputTextOptions = {}): string {
  const { nodeId } = options;
  if (nodeId !== undefined) {
    const node = result.output.find((candidate) => candidate.nodeId === nodeId);
    return aiMessages(node?.messages ?? []).map((message) => message.content).join('\n\n');
  }
  return aiMessages(result.output.flatMap((node) => node.messages)).at(-1)?.content ?? '';
}
