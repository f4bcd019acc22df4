import { describe, expect, it } from 'vitest';
import { createPipelineQueue, createPipelineWorker } from '../../src/bullmq/index.js';
import { createClient } from '../../src/client.js';

// Nothing listens on port 1: every case is refused before any connection is made.
const connection = 'redis://127.0.0.1:1';
const client = createClient({ apiKey: 'rf_00000000000000000000000000000000', baseUrl: 'http://127.0.0.1:1/v1', budget: false });

describe('createPipelineWorker and createPipelineQueue options', () => {
  it.each<[string, () => unknown, string]>([
    ['no options to a worker', () => createPipelineWorker(undefined as never), 'options'],
    ['a worker without definitions', () => createPipelineWorker({ connection, client } as never), 'definitions'],
    ['definitions that are a list', () => createPipelineWorker({ connection, client, definitions: [] as never }), 'definitions'],
    ['a definition that is a canvas id', () => createPipelineWorker({ connection, client, definitions: { report: 'c-report' as never } }), 'definitions'],
    ['a worker without a client', () => createPipelineWorker({ connection, definitions: {} } as never), 'client'],
    ['no options to a queue', () => createPipelineQueue(undefined as never), 'options'],
  ])('refuses %s with InvalidArgumentError at the call, not once a pipeline runs', (_name, create, argument) => {
    expect(create).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument }));
  });
});
