import type { WorkflowDefinition } from '../../emulator/index.js';

/** The first workflow of the demo: three branches in parallel, joined into a brief (a file). */
export const RESEARCH_CANVAS_ID = 'c-demo-research';
/** The second: reads the brief it is handed and writes the report. */
export const REPORT_CANVAS_ID = 'c-demo-report';
/** The node whose text is the demo's final output. */
export const REPORT_NODE_ID = 'node-report';
/** The name of the file the research hands to the report. */
export const BRIEF_FILE = 'brief.md';

const start = { id: 'node-start', type: 'start', title: 'Start' } as const;

/**
 * The demo's workflows, added to the embedded emulator. Durations are emulator time: at the demo's
 * speed the whole pipeline takes about ten seconds.
 */
export const DEMO_WORKFLOWS: readonly WorkflowDefinition[] = [
  {
    canvasId: RESEARCH_CANVAS_ID,
    title: 'Market research (parallel branches)',
    nodes: [
      start,
      { id: 'node-competitors', title: 'Scan competitors', parents: ['node-start'], toolsets: ['web_search'], durationMs: 9_000,
        messages: [{ content: 'Four competitors, two of them launched this year.', atMs: 5_000 }] },
      { id: 'node-pricing', title: 'Compare pricing', parents: ['node-start'], toolsets: ['web_search'], durationMs: 13_000,
        messages: [{ content: 'Seats cost from 10 to 40 a month; nobody offers a free tier.', atMs: 8_000 }] },
      { id: 'node-reviews', title: 'Read reviews', parents: ['node-start'], durationMs: 7_000,
        messages: [{ content: 'Users praise speed and complain about onboarding.', atMs: 4_000 }] },
      { id: 'node-brief', title: 'Write the brief', parents: ['node-competitors', 'node-pricing', 'node-reviews'], durationMs: 6_000,
        messages: [{ content: 'Brief written: a crowded market with room at the low end.' }],
        files: [{ name: BRIEF_FILE, type: 'text/markdown', content: '# Market brief\n\n- 4 competitors\n- 10–40 per seat\n- onboarding is the pain point\n' }] },
    ],
  },
  {
    canvasId: REPORT_CANVAS_ID,
    title: 'Report from a brief',
    variables: [{ name: 'brief', variableType: 'resource', required: true }],
    nodes: [
      start,
      { id: 'node-read', title: 'Read the brief', parents: ['node-start'], durationMs: 5_000,
        messages: [{ content: 'The brief names three findings.' }] },
      { id: REPORT_NODE_ID, title: 'Write the report', parents: ['node-read'], durationMs: 8_000,
        messages: [
          { content: 'Recommendation: enter with a free tier and guided onboarding.', atMs: 4_000 },
          { content: 'Report and chart attached.', atMs: 8_000 },
        ],
        files: [
          { name: 'report.md', type: 'text/markdown', content: '# Market report\n\nEnter with a free tier and guided onboarding.\n' },
          { name: 'chart.png', type: 'image/png', size: 4_096 },
        ] },
    ],
  },
];
