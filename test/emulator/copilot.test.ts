import { describe, expect, it } from 'vitest';
import { callJson, run, startEmulator } from './harness.js';
import type { CopilotData, PlanData, SearchData } from './wire.js';

const generate = '/openapi/copilot/workflow/generate';

describe('copilot generation (service.md §2.4, §5.3)', () => {
  it('builds one task per sentence or clause, each depending on the one before, with a new canvas', async () => {
    const emulator = await startEmulator();
    const { status, body } = await callJson<CopilotData>(emulator, generate, {
      body: { query: 'Search the web for news about {{topic}}. Then summarise the findings; finally send an e-mail to the team!' },
    });
    expect(status).toBe(200);
    const data = body.data;
    expect(data?.canvasId).toMatch(/^c-[a-z0-9]{24}$/);
    expect(data?.workflowPlan).toEqual({
      title: 'Workflow: Search the web for news about {{topic}}',
      tasks: [
        { id: 'node-task-1', title: 'Step 1: Search the web for news about {{topic}}', prompt: 'Search the web for news about {{topic}}', toolsets: ['web_search'] },
        { id: 'node-task-2', title: 'Step 2: summarise the findings', prompt: 'summarise the findings', toolsets: [], dependentTasks: ['node-task-1'] },
        { id: 'node-task-3', title: 'Step 3: send an e-mail to the team', prompt: 'send an e-mail to the team', toolsets: ['send_email'], dependentTasks: ['node-task-2'] },
      ],
      variables: [{ name: 'topic', variableType: 'string', required: false }],
    });
    const detail = await callJson<PlanData>(emulator, `/openapi/workflows/${data?.canvasId ?? ''}`);
    expect(detail.body.data).toEqual(data?.workflowPlan);
    const runnable = await run(emulator, data?.canvasId ?? '');
    expect(emulator.executions.get(runnable)?.nodes).toHaveLength(4);
  });

  it('titles the plan in the requested locale where it can, English otherwise', async () => {
    const emulator = await startEmulator();
    const plan = async (locale: string): Promise<PlanData | undefined> =>
      (await callJson<CopilotData>(emulator, generate, { body: { query: 'Écrire un poème.', locale } })).body.data?.workflowPlan;
    expect((await plan('fr'))?.tasks[0]?.title).toBe('Étape 1: Écrire un poème');
    expect((await plan('de-DE'))?.tasks[0]?.title).toBe('Schritt 1: Écrire un poème');
    expect((await plan('ja'))?.title).toBe('ワークフロー: Écrire un poème');
    expect((await plan('hi'))?.tasks[0]?.title).toBe('Step 1: Écrire un poème');
  });

  it('replaces the tasks and variables of an existing canvas', async () => {
    const emulator = await startEmulator();
    const { body } = await callJson<CopilotData>(emulator, generate, { body: { query: 'Only one step', canvasId: 'c-sample-variables' } });
    expect(body.data?.canvasId).toBe('c-sample-variables');
    const detail = await callJson<PlanData>(emulator, '/openapi/workflows/c-sample-variables');
    expect(detail.body.data?.tasks.map((task) => task.prompt)).toEqual(['Only one step']);
    expect(detail.body.data?.variables).toEqual([]);
  });

  it('answers 400 "Missing query" for an empty or blank query', async () => {
    const emulator = await startEmulator();
    for (const body of [{}, { query: '' }, { query: '   \n' }, { query: 42 }]) {
      const answer = await callJson(emulator, generate, { body });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ statusCode: 400, message: 'Missing query', error: 'Bad Request' });
    }
  });

  it('answers an unknown canvasId with a 400 on the service and a 404 in the spec profile', async () => {
    const service = await startEmulator();
    const refused = await callJson(service, generate, { body: { query: 'Do it.', canvasId: 'c-unknown' } });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ statusCode: 400, message: 'Canvas not found', error: 'Bad Request' });
    const spec = await startEmulator({ profile: 'spec' });
    expect((await callJson(spec, generate, { body: { query: 'Do it.', canvasId: 'c-unknown' } })).status).toBe(404);
  });

  it('creates the new workflow even when generation fails, and answers 400 with modelResponse', async () => {
    const emulator = await startEmulator({ samples: false });
    const { status, body } = await callJson(emulator, generate, { body: { query: '... !!! ...' } });
    expect(status).toBe(400);
    expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request', modelResponse: '' });
    const search = await callJson<SearchData>(emulator, '/openapi/workflows');
    expect(search.body.data).toEqual([{ canvasId: expect.stringMatching(/^c-/) as unknown, title: 'Untitled' }]);
  });
});
