// Compiled by `npm run typecheck` (first in `npm test`): an assertion that does not hold, or a
// `@ts-expect-error` above a line that compiles, fails the build.
import type { Observable } from 'rxjs';
import { describe, expectTypeOf, it } from 'vitest';
import type { Client, FileKey, PipelineDefinition, PipelineEvent, PipelineStep, RunEvent, RunResult, WorkflowVariables } from '../../src/index.js';
import { runEach, runPipeline, thenRun } from '../../src/index.js';
import type {} from './workflows.generated.js';

declare const client: Client;
declare const key: FileKey;

describe('runs typed by canvas id (the module flowstream types wrote)', () => {
  it('takes the right variables of a typed workflow', () => {
    expectTypeOf(client.run('c-typed-brief', { variables: { topic: 'tides', sources: key } })).toEqualTypeOf<Observable<RunEvent>>();
    client.run('c-typed-brief', { variables: { topic: 'tides', tone: 'casual', sources: [key, key], notes: [], 'due date': 'Friday' } }, { timeoutMs: 60_000 });
    client.startRun('c-typed-translate', { variables: { language: 'fr' } });
    client.run('c-typed-empty');
    client.run('c-typed-empty', { variables: {} });
    expectTypeOf<WorkflowVariables<'c-typed-translate'>>().toEqualTypeOf<{ readonly language: 'fr' | 'de'; readonly text?: string }>();
  });

  it('refuses a misspelt variable', () => {
    // @ts-expect-error -- `topik` is not a variable of c-typed-brief
    client.run('c-typed-brief', { variables: { topik: 'tides', sources: key } });
    // @ts-expect-error -- `langage` is not a variable of c-typed-translate
    client.startRun('c-typed-translate', { variables: { language: 'fr', langage: 'de' } });
    // @ts-expect-error -- c-typed-empty has no variables
    client.run('c-typed-empty', { variables: { topic: 'tides' } });
  });

  it('refuses a missing required variable', () => {
    // @ts-expect-error -- `sources` is required
    client.run('c-typed-brief', { variables: { topic: 'tides' } });
    // @ts-expect-error -- the workflow has required variables: the input must be given
    client.startRun('c-typed-translate');
    // @ts-expect-error -- a required file variable takes at least one file
    client.run('c-typed-brief', { variables: { topic: 'tides', sources: [] } });
  });

  it('refuses an option outside its list and a file that is not a file key', () => {
    // @ts-expect-error -- 'es' is not one of c-typed-translate's languages
    client.run('c-typed-translate', { variables: { language: 'es' } });
    // @ts-expect-error -- `tone` is 'formal' or 'casual'
    client.startRun('c-typed-brief', { variables: { topic: 'tides', sources: key, tone: 'rude' } });
    // @ts-expect-error -- a file variable takes an uploaded file's key
    client.run('c-typed-brief', { variables: { topic: 'tides', sources: 'report.pdf' } });
  });

  it('types runEach and thenRun by canvas id too', () => {
    runEach(client, 'c-typed-translate', [{ variables: { language: 'de' } }]);
    // @ts-expect-error -- 'es' is not one of its languages
    runEach(client, 'c-typed-translate', [{ variables: { language: 'es' } }]);
    thenRun(client, 'c-typed-translate', () => ({ variables: { language: 'fr' } }));
    // @ts-expect-error -- `langage` is misspelt
    thenRun(client, 'c-typed-translate', () => ({ variables: { langage: 'fr' } }));
  });

  it('types pipeline steps by their canvas id', () => {
    const pipeline = runPipeline(client, {
      steps: {
        brief: { canvasId: 'c-typed-brief', input: () => ({ variables: { topic: 'tides', sources: [key], tone: 'formal' } }) },
        translate: {
          canvasId: 'c-typed-translate',
          dependsOn: ['brief'],
          input: (results) => {
            expectTypeOf(results.brief).toEqualTypeOf<RunResult | undefined>();
            return Promise.resolve({ variables: { language: 'de', text: results.brief?.status ?? '' } });
          },
        },
        check: { canvasId: 'c-typed-empty', dependsOn: ['translate'] },
        publish: { canvasId: 'c-elsewhere', dependsOn: ['check'], input: () => ({ variables: { anything: 1 } }) },
      },
    });
    expectTypeOf(pipeline).toEqualTypeOf<Observable<PipelineEvent<'brief' | 'translate' | 'check' | 'publish'>>>();
  });

  it('refuses a pipeline step whose input does not fit its typed workflow', () => {
    runPipeline(client, {
      steps: {
        // @ts-expect-error -- `topik` is not a variable of c-typed-brief (and `topic` is required)
        brief: { canvasId: 'c-typed-brief', input: () => ({ variables: { topik: 'tides', sources: key } }) },
      },
    });
    runPipeline(client, {
      steps: {
        first: { canvasId: 'c-elsewhere' },
        // @ts-expect-error -- `sources` is required
        brief: { canvasId: 'c-typed-brief', dependsOn: ['first'], input: () => ({ variables: { topic: 'tides' } }) },
      },
    });
    runPipeline(client, {
      steps: {
        first: { canvasId: 'c-elsewhere' },
        // @ts-expect-error -- 'es' is not one of c-typed-translate's languages
        translate: { canvasId: 'c-typed-translate', dependsOn: ['first'], input: (results) => Promise.resolve({ variables: { language: 'es', text: results.first?.status ?? '' } }) },
      },
    });
    runPipeline(client, {
      steps: {
        // @ts-expect-error -- c-typed-empty has no variables
        check: { canvasId: 'c-typed-empty', input: () => ({ variables: { topic: 'tides' } }) },
      },
    });
    runPipeline(client, {
      steps: {
        // @ts-expect-error -- the workflow has required variables: the step needs an input
        translate: { canvasId: 'c-typed-translate' },
      },
    });
  });

  it('keeps pipeline steps loose for other canvas ids, a string, and step names given explicitly', () => {
    const id: string = 'c-typed-translate';
    runPipeline(client, { steps: { a: { canvasId: 'c-elsewhere', input: () => ({ variables: { n: 1 } }) }, b: { canvasId: id, dependsOn: ['a'], input: () => ({ variables: { whatever: true } }) } } });
    runPipeline<'a'>(client, { steps: { a: { canvasId: 'c-typed-translate', input: () => ({ variables: { whatever: true } }) } } });
    const definition: PipelineDefinition<'a'> = { steps: { a: { canvasId: 'c-typed-translate' } } };
    expectTypeOf(runPipeline(client, definition)).toEqualTypeOf<Observable<PipelineEvent<'a'>>>();
  });

  it('takes a pipeline typed by canvas ids where a loose one is expected (the definitions of a worker)', () => {
    const typed: PipelineDefinition<'translate', { translate: 'c-typed-translate' }> = {
      steps: { translate: { canvasId: 'c-typed-translate', input: () => ({ variables: { language: 'fr' } }) } },
    };
    const loose: PipelineDefinition<string> = typed;
    const step: PipelineStep<'translate'> = typed.steps.translate;
    expectTypeOf(runPipeline(client, loose)).toEqualTypeOf<Observable<PipelineEvent<string>>>();
    expectTypeOf(step.canvasId).toEqualTypeOf<string>();
    // @ts-expect-error -- 'es' is not one of c-typed-translate's languages
    const wrong: PipelineDefinition<'translate', { translate: 'c-typed-translate' }> = { steps: { translate: { canvasId: 'c-typed-translate', input: () => ({ variables: { language: 'es' } }) } } };
    expectTypeOf(wrong).not.toBeNever();
  });

  it('stays loose for a canvas id the module does not have, and for a string', () => {
    client.run('c-elsewhere', { variables: { anything: 1, files: ['of_x'] } });
    client.startRun('c-elsewhere');
    const id: string = 'c-typed-brief';
    client.run(id, { variables: { whatever: true } });
    runEach(client, 'c-elsewhere', [{ variables: { n: 1 } }]);
  });
});
