import { ESLint, Linter } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

/** The project's own import rule for `filePath`, applied to `code`: the messages it gives. */
async function importFindings(filePath: string, code: string): Promise<string[]> {
  const config = (await eslint.calculateConfigForFile(filePath)) as { rules?: Record<string, Linter.RuleEntry> };
  const rule = config.rules?.['no-restricted-imports'];
  expect(rule, `no import rule applies to ${filePath}`).toBeDefined();
  const linter = new Linter({ configType: 'flat' });
  const messages = linter.verify(code, [{ files: ['**/*.ts'], languageOptions: { sourceType: 'module' }, rules: { 'no-restricted-imports': rule! } }], { filename: filePath });
  return messages.map((message) => message.message);
}

describe('the layer rule of eslint.config.js (runs → budget → http → fetch, the core browser-safe)', () => {
  it.each([
    ['src/domain/model.ts', "import { x } from '../errors/api-errors.js';"],
    ['src/errors/api-errors.ts', "import { x } from '../http/transport.js';"],
    ['src/http/transport.ts', "import { x } from '../budget/budget-core.js';"],
    ['src/http/schemas/execution.ts', "import { x } from '../../runs/events.js';"],
    ['src/budget/budget-core.ts', "import { x } from '../runs/cadence.js';"],
    ['src/runs/run-lifecycle.ts', "import { x } from '../pipeline/run-pipeline.js';"],
    ['src/runs/run-lifecycle.ts', "import { x } from '../client.js';"],
    ['src/pipeline/run-pipeline.ts', "import { x } from '../node/from-path.js';"],
    ['src/http/download.ts', "import { readFile } from 'node:fs/promises';"],
    ['src/budget/budget-core.ts', "import { x } from '../redis/budget.js';"],
    ['src/pipeline/run-pipeline.ts', "import { x } from '../bullmq/pipeline-worker.js';"],
    ['src/runs/connect-run.ts', "import { x } from '../relay/run-relay.js';"],
    ['src/index.ts', "import { x } from './relay/index.js';"],
    ['src/relay/run-relay.ts', "import { createServer } from 'node:http';"],
    ['src/relay/run-relay.ts', "import { x } from '../node/from-path.js';"],
    ['src/relay/run-relay.ts', "import { x } from '../redis/redis-budget.js';"],
    ['src/react/use-run.ts', "import { x } from '../relay/run-relay.js';"],
    ['src/react/use-run.ts', "import { readFile } from 'node:fs/promises';"],
    ['src/react/use-run.ts', "import { x } from '../node/from-path.js';"],
    ['src/react/use-run.ts', "import { x } from '../emulator/index.js';"],
    ['src/runs/run-state.ts', "import { useSyncExternalStore } from 'react';"],
    ['src/runs/run-state.ts', "import { useRun } from '../react/use-run.js';"],
    ['src/index.ts', "import { useRun } from './react/index.js';"],
    ['src/http/transport.ts', "import { trace } from '@opentelemetry/api';"],
    ['src/runs/run-lifecycle.ts', "import { createTelemetry } from '../otel/index.js';"],
    ['src/client.ts', "import { createTelemetry } from './otel/index.js';"],
    ['src/otel/telemetry.ts', "import { x } from '../node/from-path.js';"],
    ['src/index.ts', "import { metrics } from '@opentelemetry/api';"],
  ])('refuses in %s: %s', async (filePath, code) => {
    expect(await importFindings(filePath, code)).toHaveLength(1);
  });

  it.each([
    ['src/errors/api-errors.ts', "import { x } from '../domain/endpoints.js';"],
    ['src/http/transport.ts', "import { x } from '../errors/transport-errors.js';"],
    ['src/budget/request-budget.ts', "import { x } from '../http/options.js';"],
    ['src/runs/run-lifecycle.ts', "import { x } from '../http/calls.js';"],
    ['src/pipeline/run-pipeline.ts', "import { x } from '../runs/events.js';"],
    ['src/http/schemas/execution.ts', "import { x } from '../../domain/model.js';"],
    ['src/relay/run-relay.ts', "import { createClient } from '../client.js';"],
    ['src/relay/followed-execution.ts', "import { x } from '../runs/run-state.js';"],
    ['src/react/use-run.ts', "import { runStore } from '../runs/run-state.js';"],
    ['src/react/use-run.ts', "import { useSyncExternalStore } from 'react';"],
    ['src/otel/telemetry.ts', "import { trace } from '@opentelemetry/api';"],
    ['src/otel/telemetry.ts', "import { createClient } from '../client.js';"],
  ])('allows in %s: %s', async (filePath, code) => {
    expect(await importFindings(filePath, code)).toEqual([]);
  });
});
