import { InvalidArgumentError } from '../errors/validation-errors.js';
import { encodeJsonBody, MAX_TEXT_CHARACTERS } from './json-body.js';
import type { CallOptions, GeneratedWorkflow } from './model.js';
import { pathSegment } from './path-segment.js';
import { generatedWorkflowSchema } from './schemas/workflow.js';
import type { Send } from './transport.js';
import { objectArgument } from './object-argument.js';

/**
 * The locales of spec §4.8.
 *
 * @example
 * ```ts
 * COPILOT_LOCALES.includes('fr'); // true
 * ```
 */
export const COPILOT_LOCALES = ['en', 'zh-CN', 'ja', 'zh-Hant', 'fr', 'de-DE', 'ko', 'hi', 'es', 'ru', 'de', 'it', 'tr', 'pt', 'vi', 'id', 'th', 'ar', 'mn', 'fa'] as const;
/**
 * A locale copilot accepts (spec §4.8).
 *
 * @example
 * ```ts
 * const locale: CopilotLocale = 'zh-CN';
 * ```
 */
export type CopilotLocale = (typeof COPILOT_LOCALES)[number];

/**
 * What to generate.
 *
 * @example
 * ```ts
 * const request: GenerateRequest = { query: 'Translate the brief', locale: 'fr', replaceCanvasId: 'c-1' };
 * ```
 */
export interface GenerateRequest {
  /** The workflow to build, in words; must not be blank (PROTOCOL §5.3). */
  readonly query: string;
  readonly locale?: CopilotLocale;
  /**
   * The workflow whose tasks and variables are **replaced, irreversibly** (PROTOCOL §5.3). Without it,
   * a new workflow is created.
   */
  readonly replaceCanvasId?: string;
}

/**
 * Copilot generation (spec §4.8). It blocks until the plan is ready, up to 300 s (PROTOCOL §2.4), and
 * is never retried after it may have reached the service: each attempt creates or replaces a workflow.
 *
 * @example
 * ```ts
 * const { canvasId } = await client.copilot.generate({ query: 'Summarise a PDF into bullet points', locale: 'en' });
 * ```
 */
export interface CopilotApi {
  generate(request: GenerateRequest, options?: CallOptions): Promise<GeneratedWorkflow>;
}

function checkRequest(request: GenerateRequest): { query: string; locale?: string; canvasId?: string } {
  if (typeof request.query !== 'string' || request.query.trim() === '') throw new InvalidArgumentError('query', 'must not be empty');
  if (request.query.length > MAX_TEXT_CHARACTERS) throw new InvalidArgumentError('query', `is longer than ${MAX_TEXT_CHARACTERS} characters (the service's E2004)`);
  if (request.locale !== undefined && !(COPILOT_LOCALES as readonly string[]).includes(request.locale)) {
    throw new InvalidArgumentError('locale', `must be one of ${COPILOT_LOCALES.join(', ')} (got "${request.locale}")`);
  }
  if (request.replaceCanvasId !== undefined) pathSegment('replaceCanvasId', request.replaceCanvasId);
  return {
    query: request.query,
    ...(request.locale === undefined ? {} : { locale: request.locale }),
    ...(request.replaceCanvasId === undefined ? {} : { canvasId: request.replaceCanvasId }),
  };
}

/**
 * Builds the copilot resource.
 *
 * @example
 * ```ts
 * const copilot = createCopilotApi(send);
 * ```
 */
export function createCopilotApi(send: Send): CopilotApi {
  return {
    async generate(request: GenerateRequest, options?: CallOptions) {
      const json = encodeJsonBody('request', checkRequest(request));
      return send({ endpoint: 'copilot', method: 'post', path: 'openapi/copilot/workflow/generate', json, schema: generatedWorkflowSchema, signal: objectArgument('options', options).signal });
    },
  };
}
