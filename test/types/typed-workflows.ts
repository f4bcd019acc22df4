import type { WorkflowDefinition } from '../../src/emulator/index.js';

const start = { id: 'node-start', type: 'start', title: 'Start' } as const;

/**
 * The workflows whose types `workflows.generated.ts` holds, as `flowstream types` wrote them from an
 * emulator serving these alone (see types-command.test.ts). Their canvas ids are used nowhere else, so
 * the augmentation types no other test's runs.
 */
export const TYPED_WORKFLOWS: readonly WorkflowDefinition[] = [
  {
    canvasId: 'c-typed-brief',
    title: 'Brief from sources',
    nodes: [start, { id: 'node-brief', title: 'Write the brief', parents: ['node-start'], durationMs: 1_000, messages: [{ content: 'The brief.' }] }],
    variables: [
      { name: 'topic', variableType: 'string', required: true },
      { name: 'tone', variableType: 'option', options: ['formal', 'casual'] },
      { name: 'sources', variableType: 'resource', required: true },
      { name: 'notes', variableType: 'resource' },
      { name: 'due date', variableType: 'string' },
    ],
  },
  {
    canvasId: 'c-typed-translate',
    title: "Translate a text (it's quick) */ not a comment end",
    nodes: [start, { id: 'node-translate', title: 'Translate', parents: ['node-start'], durationMs: 1_000, messages: [{ content: 'Traduit.' }] }],
    variables: [
      { name: 'language', variableType: 'option', options: ['fr', 'de'], required: true },
      { name: 'text', variableType: 'string' },
    ],
  },
  { canvasId: 'c-typed-empty', title: 'No variables', nodes: [start, { id: 'node-only', title: 'Only', parents: ['node-start'], durationMs: 1_000 }] },
];
