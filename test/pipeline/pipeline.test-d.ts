import type { Observable } from 'rxjs';
import { describe, expectTypeOf, it } from 'vitest';
import type { RunResult } from '../../src/domain/model.js';
import type { PipelineClient } from '../../src/pipeline/pipeline-client.js';
import type { PipelineEvent, StepOutcome } from '../../src/pipeline/pipeline-events.js';
import { runPipeline } from '../../src/pipeline/run-pipeline.js';

declare const client: PipelineClient;

describe('runPipeline types', () => {
  it('names steps by the keys of the definition', () => {
    const pipeline = runPipeline(client, {
      steps: {
        fetch: { canvasId: 'c-1' },
        summary: {
          canvasId: 'c-2',
          dependsOn: ['fetch'],
          input: (results) => {
            expectTypeOf(results.fetch).toEqualTypeOf<RunResult | undefined>();
            return {};
          },
        },
      },
    });
    expectTypeOf(pipeline).toEqualTypeOf<Observable<PipelineEvent<'fetch' | 'summary'>>>();
    pipeline.subscribe((event) => {
      if (event.type === 'finished') expectTypeOf(event.outcomes.summary).toEqualTypeOf<StepOutcome<'fetch' | 'summary'>>();
      if (event.type === 'checkpoint') expectTypeOf(event.checkpoint.steps.fetch?.executionId).toEqualTypeOf<string | undefined>();
    });
  });

  it('refuses a dependency on a step that does not exist', () => {
    runPipeline(client, {
      steps: {
        fetch: { canvasId: 'c-1' },
        // @ts-expect-error: 'fecth' is not a step
        summary: { canvasId: 'c-2', dependsOn: ['fecth'] },
      },
    });
  });
});
