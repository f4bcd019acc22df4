import type { WorkflowDefinition } from './definition.js';

const start = { id: 'node-start', type: 'start', title: 'Start' } as const;

/**
 * The built-in catalogue: small workflows that show each behaviour of the service. Their canvas ids
 * are fixed, so that tests and demos can name them.
 */
export const SAMPLE_WORKFLOWS: readonly WorkflowDefinition[] = [
  {
    canvasId: 'c-sample-linear',
    title: 'Research brief (linear chain)',
    nodes: [
      start,
      { id: 'node-research', title: 'Research', parents: ['node-start'], toolsets: ['web_search'], durationMs: 6_000,
        messages: [
          { content: 'Found three recent sources on the topic.', reasoning: 'Searching the web first.' },
          { content: 'The sources agree on the main trend.' },
        ] },
      { id: 'node-outline', title: 'Outline', parents: ['node-research'], durationMs: 4_000,
        messages: [{ content: '1. Context\n2. Findings\n3. Outlook' }] },
      { id: 'node-write', title: 'Write the brief', parents: ['node-outline'], durationMs: 5_000,
        messages: [{ content: 'The brief: the trend is real and growing.' }] },
    ],
  },
  {
    canvasId: 'c-sample-parallel',
    title: 'Market scan (parallel branches)',
    nodes: [
      start,
      { id: 'node-competitors', title: 'Scan competitors', parents: ['node-start'], durationMs: 5_000,
        messages: [{ content: 'Four competitors, two of them new.' }] },
      { id: 'node-pricing', title: 'Compare pricing', parents: ['node-start'], durationMs: 8_000,
        messages: [{ content: 'Prices range from 10 to 40 per seat.' }] },
      { id: 'node-summary', title: 'Summarise the market', parents: ['node-competitors', 'node-pricing'], durationMs: 3_000,
        messages: [{ content: 'A crowded market with room at the low end.' }] },
    ],
  },
  {
    canvasId: 'c-sample-branch-failure',
    title: 'Translation with a failing branch',
    nodes: [
      start,
      { id: 'node-translate-fr', title: 'Translate to French', parents: ['node-start'], durationMs: 4_000,
        messages: [{ content: 'Bonjour, le monde', atMs: 2_000 }],
        failure: { kind: 'error', errors: ['Request timeout. Please try again later.'], atMs: 4_000 } },
      { id: 'node-translate-de', title: 'Translate to German', parents: ['node-start'], durationMs: 9_000,
        messages: [{ content: 'Hallo, Welt' }] },
      { id: 'node-merge', title: 'Merge translations', parents: ['node-translate-fr', 'node-translate-de'], durationMs: 2_000,
        messages: [{ content: 'Both translations merged.' }] },
    ],
  },
  {
    canvasId: 'c-sample-files',
    title: 'Quarterly report with files',
    nodes: [
      start,
      { id: 'node-report', title: 'Write the report', parents: ['node-start'], durationMs: 5_000,
        messages: [{ content: 'The report is ready.' }],
        files: [
          { name: 'report.md', type: 'text/markdown', content: '# Quarterly report\n\nRevenue grew by 12%.\n' },
          { name: 'figures.csv', type: 'text/csv', content: 'quarter,revenue\nQ1,100\nQ2,112\n' },
        ] },
      { id: 'node-chart', title: 'Draw the chart', parents: ['node-report'], toolsets: ['image_generation'], durationMs: 4_000,
        messages: [{ content: 'Chart drawn.' }],
        files: [{ name: 'chart.png', type: 'image/png', size: 2_048 }] },
    ],
  },
  {
    canvasId: 'c-sample-variables',
    title: 'Personalised newsletter (variables)',
    nodes: [
      start,
      { id: 'node-attachment', type: 'resource', title: 'Attachment' },
      { id: 'node-draft', title: 'Draft the newsletter', prompt: 'Write about {{topic}} in a {{tone}} tone, using {{attachment}}.',
        parents: ['node-start', 'node-attachment'], durationMs: 5_000,
        messages: [{ content: 'Here is this week\'s newsletter.' }] },
    ],
    variables: [
      { name: 'topic', variableType: 'string', required: true },
      { name: 'tone', variableType: 'option', options: ['formal', 'casual'] },
      { name: 'attachment', variableType: 'resource' },
    ],
  },
  { canvasId: 'c-sample-empty', title: 'Empty workflow', nodes: [] },
  {
    canvasId: 'c-sample-credit',
    title: 'Image generation (out of credits)',
    nodes: [start, { id: 'node-image', title: 'Generate the image', parents: ['node-start'], toolsets: ['image_generation'], failure: { kind: 'credit' } }],
  },
  {
    canvasId: 'c-sample-timeout',
    title: 'Long-running analysis (times out)',
    nodes: [start, { id: 'node-analysis', title: 'Analyse everything', parents: ['node-start'], durationMs: 40 * 60 * 1_000 }],
  },
  {
    canvasId: 'c-sample-news',
    title: 'Daily news digest',
    nodes: [start, { id: 'node-digest', title: 'Digest the news', parents: ['node-start'], toolsets: ['web_search'], durationMs: 4_000,
      messages: [{ content: 'Today: three stories worth reading.', reasoning: null }] }],
  },
  {
    canvasId: 'c-sample-sales',
    title: 'Weekly sales report',
    nodes: [start, { id: 'node-sales', title: 'Sum up sales', parents: ['node-start'], durationMs: 3_000,
      messages: [{ content: 'Sales rose 4% this week.' }] }],
  },
  {
    canvasId: 'c-sample-support',
    title: 'Customer support triage',
    nodes: [start, { id: 'node-triage', title: 'Triage tickets', parents: ['node-start'], durationMs: 3_000,
      messages: [{ content: '12 tickets: 3 urgent.' }] }],
  },
  {
    canvasId: 'c-sample-untitled',
    nodes: [start, { id: 'node-note', type: 'memo', title: 'A note', parents: ['node-start'] }],
  },
];
