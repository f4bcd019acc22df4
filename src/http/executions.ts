import type * as z from 'zod/mini';
import { InvalidArgumentError } from '../errors/validation-errors.js';
import { warnAboutFileKeyLookalikes } from './file-key-warning.js';
import { encodeJsonBody } from './json-body.js';
import { callOptions } from './call-options.js';
import type { CallOptions, ExecutionsApi, StartOptions } from './calls.js';
import type { Logger, Variables } from '../domain/model.js';
import { objectArgument } from './object-argument.js';
import { pathSegment } from './path-segment.js';
import { abortSchema, executionOutputSchema, executionSnapshotSchema, startedExecutionSchema } from './schemas/execution.js';
import type { Send } from './transport.js';

/** What the executions resource shares with the rest of the client. */
export interface ExecutionsContext {
  readonly send: Send;
  readonly logger: Logger | undefined;
  /** File keys this client uploaded (see `warnAboutFileKeyLookalikes`). */
  readonly uploadedKeys: ReadonlySet<string>;
}

function checkVariables(variables: unknown): asserts variables is Variables {
  if (typeof variables !== 'object' || variables === null || Array.isArray(variables)) {
    throw new InvalidArgumentError('variables', 'must be an object of name → value');
  }
}

/**
 * The execution endpoints (spec §4.1–4.4): the {@link ExecutionsApi} seam the run layer polls through.
 * Errors of status/output/abort carry the `executionId`.
 */
export function createExecutionsApi(context: ExecutionsContext): ExecutionsApi {
  const { send } = context;
  /** One call on an existing execution: keyed by its id for the budget, its errors carry the id. */
  const onExecution = async <T>(
    endpoint: 'status' | 'output' | 'abort',
    method: 'get' | 'post',
    executionId: string,
    schema: z.ZodMiniType<T>,
    options: CallOptions | undefined,
  ): Promise<T> => {
    const segment = pathSegment('executionId', executionId);
    return send({ endpoint, method, path: `openapi/workflow/${segment}/${endpoint}`, key: executionId, executionId, schema, ...callOptions(options) });
  };
  return {
    async start(canvasId: string, input?: { readonly variables?: Variables }, options?: StartOptions) {
      const segment = pathSegment('canvasId', canvasId);
      const { onSending } = objectArgument('options', options);
      const variables = objectArgument('input', input).variables ?? {};
      checkVariables(variables);
      // service.md §5.4: the service rejects top-level variables, so the wrapper is always sent.
      const body = { variables };
      const json = encodeJsonBody('variables', body);
      warnAboutFileKeyLookalikes(variables, context.uploadedKeys, context.logger);
      return send({
        endpoint: 'run',
        method: 'post',
        path: `openapi/workflow/${segment}/run`,
        json,
        // gate.ts: identical starts (same canvas, same exact body) share a key (service.md §2.2).
        key: `${canvasId}\n${json}`,
        schema: startedExecutionSchema,
        ...callOptions(options),
        onSending,
      });
    },
    status: (executionId, options) => onExecution('status', 'get', executionId, executionSnapshotSchema(executionId), options),
    output: (executionId, options) => onExecution('output', 'get', executionId, executionOutputSchema, options),
    abort: (executionId, options) => onExecution('abort', 'post', executionId, abortSchema, options),
  };
}
