import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/emulator/index.js';
import type { WorkflowDefinition } from '../../src/emulator/index.js';
import { callJson, startEmulator } from './harness.js';
import type { PlanData, SearchData } from './wire.js';

const titles = async (emulator: Awaited<ReturnType<typeof startEmulator>>, query: string): Promise<string[]> =>
  ((await callJson<SearchData>(emulator, `/openapi/workflows${query}`)).body.data ?? []).map((item) => item.title);

const numbered = (count: number): WorkflowDefinition[] =>
  Array.from({ length: count }, (_, index) => ({ canvasId: `c-n${String(index).padStart(3, '0')}`, title: `Numbered ${String(index).padStart(3, '0')}`, nodes: [] }));

describe('search (service.md §5.1)', () => {
  it('matches the keyword as a case-insensitive substring of the title', async () => {
    const emulator = await startEmulator();
    expect((await titles(emulator, '?keyword=REPORT')).sort()).toEqual(['Quarterly report with files', 'Weekly sales report']);
    expect(await titles(emulator, '?keyword=no-such-title')).toEqual([]);
  });

  it('answers a bare array of {canvasId, title}, with Untitled for a workflow without title', async () => {
    const emulator = await startEmulator();
    const { body } = await callJson<SearchData>(emulator, '/openapi/workflows?keyword=untitled');
    expect(body).toEqual({ success: true, data: [{ canvasId: 'c-sample-untitled', title: 'Untitled' }] });
  });

  it('orders by creation or update time, updationDesc by default and for unknown orders', async () => {
    const clock = createManualClock();
    const emulator = await startEmulator({ clock, samples: false, workflows: [{ canvasId: 'c-first', title: 'First', nodes: [] }] });
    clock.advance(1_000);
    emulator.workflows.add({ canvasId: 'c-second', title: 'Second', nodes: [] });
    clock.advance(1_000);
    // Regenerating the first canvas updates it (service.md §5.3).
    await callJson(emulator, '/openapi/copilot/workflow/generate', { body: { query: 'Do it.', canvasId: 'c-first' } });
    const ids = async (query: string): Promise<string[]> =>
      ((await callJson<SearchData>(emulator, `/openapi/workflows${query}`)).body.data ?? []).map((item) => item.canvasId);
    expect(await ids('')).toEqual(['c-first', 'c-second']);
    expect(await ids('?order=nonsense')).toEqual(['c-first', 'c-second']);
    expect(await ids('?order=updationAsc')).toEqual(['c-second', 'c-first']);
    expect(await ids('?order=creationAsc')).toEqual(['c-first', 'c-second']);
    expect(await ids('?order=creationDesc')).toEqual(['c-second', 'c-first']);
  });

  it('pages with page (default 1) and pageSize (default 20, clamped to 100); the last page is the first short one', async () => {
    const emulator = await startEmulator({ samples: false, workflows: numbered(130) });
    expect(await titles(emulator, '')).toHaveLength(20);
    expect(await titles(emulator, '?order=creationAsc&page=2&pageSize=50')).toEqual(numbered(130).slice(50, 100).map((w) => w.title));
    expect(await titles(emulator, '?pageSize=500')).toHaveLength(100);
    expect(await titles(emulator, '?page=2&pageSize=500')).toHaveLength(30);
    expect(await titles(emulator, '?page=3&pageSize=100')).toEqual([]);
    expect(await titles(emulator, '?page=0&pageSize=abc')).toHaveLength(20);
  });
});

describe('detail (service.md §5.2)', () => {
  it('derives the plan from the DAG: task nodes, task→task dependencies only, variables with defaults', async () => {
    const emulator = await startEmulator();
    const { body } = await callJson<PlanData>(emulator, '/openapi/workflows/c-sample-parallel');
    expect(body.data).toEqual({
      title: 'Market scan (parallel branches)',
      tasks: [
        { id: 'node-competitors', title: 'Scan competitors', prompt: 'Scan competitors', toolsets: [] },
        { id: 'node-pricing', title: 'Compare pricing', prompt: 'Compare pricing', toolsets: [] },
        { id: 'node-summary', title: 'Summarise the market', prompt: 'Summarise the market', toolsets: [], dependentTasks: ['node-competitors', 'node-pricing'] },
      ],
      variables: [],
    });
    const variables = await callJson<PlanData>(emulator, '/openapi/workflows/c-sample-variables');
    expect(variables.body.data?.variables).toEqual([
      { name: 'topic', variableType: 'string', required: true },
      { name: 'tone', variableType: 'option', required: false, options: ['formal', 'casual'] },
      { name: 'attachment', variableType: 'resource', required: false },
    ]);
  });

  it('answers an unknown canvas with E1000', async () => {
    const emulator = await startEmulator();
    expect((await callJson(emulator, '/openapi/workflows/c-unknown')).body).toMatchObject({ success: false, errCode: 'E1000' });
  });
});
