import { InvalidArgumentError } from '../errors/validation-errors.js';
import { encodeJsonBody, MAX_TEXT_CHARACTERS } from './json-body.js';
import { callOptions } from './call-options.js';
import type { CallOptions } from './calls.js';
import type { GeneratedWorkflow, Logger } from '../domain/model.js';
import { pathSegment } from './path-segment.js';
import { generatedWorkflowSchema } from './schemas/workflow.js';
import type { Send } from './transport.js';

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
 * A locale for copilot's titles: one of the documented list (spec §4.8), which editors offer as you
 * type, or any other tag. The service passes the locale on to the model without checking it, so an
 * undocumented one (`zh-Hans`, `pt-BR`) is sent as given; the client only logs a warning.
 *
 * @example
 * ```ts
 * const locale: CopilotLocale = 'zh-CN';
 * const other: CopilotLocale = 'zh-Hans'; // accepted, with a logger warning
 * ```
 */
// `string & {}` keeps the documented names as suggestions instead of widening the union to `string`.
export type CopilotLocale = (typeof COPILOT_LOCALES)[number] | (string & {});

const DOCUMENTED_LOCALES: ReadonlySet<string> = new Set(COPILOT_LOCALES);

/**
 * What to generate.
 *
 * @example
 * ```ts
 * const request: GenerateRequest = { query: 'Translate the brief', locale: 'fr', replaceCanvasId: 'c-1' };
 * ```
 */
export interface GenerateRequest {
  /** The workflow to build, in words; must not be blank (service.md §5.3). */
  readonly query: string;
  readonly locale?: CopilotLocale;
  /**
   * The workflow whose tasks and variables are **replaced, irreversibly** (service.md §5.3). Without it,
   * a new workflow is created.
   */
  readonly replaceCanvasId?: string;
}

/**
 * Copilot generation (spec §4.8). It blocks until the plan is ready, up to 300 s (service.md §2.4), and
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

/** Each undocumented locale is logged once per client: a bot generating in `zh-Hans` all day hears it once. */
function checkLocale(locale: string | undefined, logger: Logger | undefined, warned: Set<string>): void {
  if (locale === undefined) return;
  // Typed as a string, but a JavaScript caller can pass anything.
  const given: unknown = locale;
  if (typeof given !== 'string' || given.trim() === '') throw new InvalidArgumentError('locale', 'must be a non-empty string');
  if (!DOCUMENTED_LOCALES.has(locale) && !warned.has(locale)) {
    warned.add(locale);
    logger?.warn(`flowstream: copilot locale "${locale}" is not one of the documented ones (${COPILOT_LOCALES.join(', ')}); it is sent as given`, { locale });
  }
}

function checkRequest(request: GenerateRequest, logger: Logger | undefined, warned: Set<string>): { query: string; locale?: string; canvasId?: string } {
  if (typeof request.query !== 'string' || request.query.trim() === '') throw new InvalidArgumentError('query', 'must not be empty');
  if (request.query.length > MAX_TEXT_CHARACTERS) throw new InvalidArgumentError('query', `is longer than ${MAX_TEXT_CHARACTERS} characters (the service's E2004)`);
  checkLocale(request.locale, logger, warned);
  if (request.replaceCanvasId !== undefined) pathSegment('replaceCanvasId', request.replaceCanvasId);
  return {
    query: request.query,
    ...(request.locale === undefined ? {} : { locale: request.locale }),
    ...(request.replaceCanvasId === undefined ? {} : { canvasId: request.replaceCanvasId }),
  };
}

/** Builds the copilot resource; `logger` hears about undocumented locales (once each). */
export function createCopilotApi(send: Send, logger?: Logger): CopilotApi {
  const warned = new Set<string>();
  return {
    async generate(request: GenerateRequest, options?: CallOptions) {
      const json = encodeJsonBody('request', checkRequest(request, logger, warned));
      return send({ endpoint: 'copilot', method: 'post', path: 'openapi/copilot/workflow/generate', json, schema: generatedWorkflowSchema, ...callOptions(options) });
    },
  };
}
