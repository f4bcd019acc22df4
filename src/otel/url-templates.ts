import type { Endpoint } from '../domain/endpoints.js';

/**
 * The path template of each endpoint, relative to the base URL (`url.template` of the HTTP client
 * semantic conventions): ids stay out of it, so spans of one endpoint group together.
 */
export const URL_TEMPLATES: Readonly<Record<Endpoint, string>> = {
  run: 'openapi/workflow/{canvasId}/run',
  abort: 'openapi/workflow/{executionId}/abort',
  status: 'openapi/workflow/{executionId}/status',
  output: 'openapi/workflow/{executionId}/output',
  search: 'openapi/workflows',
  detail: 'openapi/workflows/{canvasId}',
  upload: 'openapi/files/upload',
  copilot: 'openapi/copilot/workflow/generate',
};
