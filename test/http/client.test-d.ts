import { describe, expectTypeOf, it } from 'vitest';
import type { ApiError, NotFoundError, RateLimitError } from '../../src/errors/api-errors.js';
import { isNotFoundError, isRateLimitError } from '../../src/errors/api-errors.js';
import { createHttpClient, type HttpClient } from '../../src/http/client.js';
import type { GenerateRequest } from '../../src/http/resources.js';
import { downloadFile } from '../../src/http/download.js';
import type { RateLimitInfo } from '../../src/domain/requests.js';
import type { ExecutionOutput, ExecutionSnapshot, GeneratedWorkflow, StartedExecution, UploadedFile, WorkflowPlan, WorkflowSummary } from '../../src/domain/model.js';
import type { CallOptions, ExecutionsApi } from '../../src/http/calls.js';
import type { HttpOptions as ClientOptions } from '../../src/http/options.js';
import { fromPath } from '../../src/node/index.js';

declare const client: HttpClient;

describe('public signatures', () => {
  it('createHttpClient takes ClientOptions and gives an HttpClient', () => {
    expectTypeOf(createHttpClient).parameter(0).toEqualTypeOf<ClientOptions>();
    expectTypeOf(createHttpClient).returns.toEqualTypeOf<HttpClient>();
    expectTypeOf<ClientOptions>().toHaveProperty('apiKey').toEqualTypeOf<string>();
    expectTypeOf<{ apiKey: string }>().toExtend<ClientOptions>();
  });

  it('executions satisfy the run layer’s seam', () => {
    expectTypeOf(client.executions).toEqualTypeOf<ExecutionsApi>();
    expectTypeOf<ReturnType<HttpClient['executions']['start']>>().toEqualTypeOf<Promise<StartedExecution>>();
    expectTypeOf<ReturnType<HttpClient['executions']['status']>>().toEqualTypeOf<Promise<ExecutionSnapshot>>();
    expectTypeOf<ReturnType<HttpClient['executions']['output']>>().toEqualTypeOf<Promise<ExecutionOutput>>();
    expectTypeOf<ReturnType<HttpClient['executions']['abort']>>().toEqualTypeOf<Promise<void>>();
  });

  it('a call takes a signal and a budget class, and no time of its own in the budget', () => {
    expectTypeOf<{ signal: AbortSignal; priority: 'interactive' }>().toExtend<CallOptions>();
    expectTypeOf<CallOptions>().not.toHaveProperty('dueAt');
  });

  it('workflows, files and copilot return the domain types', () => {
    expectTypeOf<ReturnType<HttpClient['workflows']['search']>>().toEqualTypeOf<Promise<WorkflowSummary[]>>();
    expectTypeOf<ReturnType<HttpClient['workflows']['list']>>().toEqualTypeOf<AsyncIterable<WorkflowSummary>>();
    expectTypeOf<ReturnType<HttpClient['workflows']['get']>>().toEqualTypeOf<Promise<WorkflowPlan>>();
    expectTypeOf<ReturnType<HttpClient['files']['upload']>>().toEqualTypeOf<Promise<UploadedFile[]>>();
    expectTypeOf<ReturnType<HttpClient['copilot']['generate']>>().toEqualTypeOf<Promise<GeneratedWorkflow>>();
    expectTypeOf(downloadFile).returns.toEqualTypeOf<Promise<Blob>>();
  });

  it('the workflow to replace is canvasId, as the contract names it; another key is not accepted', () => {
    expectTypeOf<{ query: string; canvasId: string }>().toExtend<GenerateRequest>();
    // @ts-expect-error no such option
    const request: GenerateRequest = { query: 'q', replaceCanvasId: 'c-1' };
    expectTypeOf(request).toEqualTypeOf<GenerateRequest>();
  });

  it('uploads accept Files, named bytes and Node sources', () => {
    expectTypeOf<Parameters<HttpClient['files']['upload']>[0]>().toExtend<readonly unknown[]>();
    expectTypeOf<[File]>().toExtend<Parameters<HttpClient['files']['upload']>[0]>();
    expectTypeOf<[{ name: string; data: Uint8Array }]>().toExtend<Parameters<HttpClient['files']['upload']>[0]>();
    expectTypeOf(fromPath).returns.resolves.toExtend<Parameters<HttpClient['files']['upload']>[0][number]>();
  });

  it('guards narrow unknown errors to their class', () => {
    const error: unknown = undefined;
    if (isNotFoundError(error)) expectTypeOf(error).toEqualTypeOf<NotFoundError>();
    if (isRateLimitError(error)) {
      expectTypeOf(error).toExtend<ApiError>();
      expectTypeOf(error.rateLimit).toEqualTypeOf<RateLimitInfo>();
      expectTypeOf(error).toEqualTypeOf<RateLimitError>();
    }
  });
});
