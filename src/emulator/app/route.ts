/** The name of what a request asked for, as recorded in the request log and matched by faults. */
export type EndpointName =
  | 'run'
  | 'abort'
  | 'status'
  | 'output'
  | 'search'
  | 'detail'
  | 'upload'
  | 'copilot'
  | 'file'
  | 'preflight'
  | 'unknown';

/** A request matched to its endpoint, with its path parameters. */
export type Route =
  | { readonly endpoint: 'run' | 'detail'; readonly canvasId: string }
  | { readonly endpoint: 'abort' | 'status' | 'output'; readonly executionId: string }
  | { readonly endpoint: 'search' | 'upload' | 'copilot' }
  | { readonly endpoint: 'preflight' | 'unknown' }
  | { readonly endpoint: 'file'; readonly fileId: string; readonly name: string };

const EXECUTION_ACTION = /^\/v1\/openapi\/workflow\/([^/]+)\/(run|abort|status|output)$/;
const DETAIL = /^\/v1\/openapi\/workflows\/([^/]+)$/;
const PUBLIC_FILE = /^\/v1\/drive\/file\/public\/([^/]+)\/(.+)$/;

/** Matches a method and path (under the `/v1` base) to the API endpoint it names. */
export function matchRoute(method: string, pathname: string): Route {
  // CORS: a browser asks before sending Authorization (answered without auth).
  if (method === 'OPTIONS') return { endpoint: 'preflight' };
  try {
    return matchApi(method, pathname);
  } catch {
    // A path parameter that is not valid percent-encoding names nothing.
    return { endpoint: 'unknown' };
  }
}

function matchApi(method: string, pathname: string): Route {
  const action = EXECUTION_ACTION.exec(pathname);
  if (action !== null) {
    const id = decodeURIComponent(action[1] ?? '');
    switch (action[2] ?? '') {
      case 'run':
        return method === 'POST' ? { endpoint: 'run', canvasId: id } : { endpoint: 'unknown' };
      case 'abort':
        return method === 'POST' ? { endpoint: 'abort', executionId: id } : { endpoint: 'unknown' };
      case 'status':
        return method === 'GET' ? { endpoint: 'status', executionId: id } : { endpoint: 'unknown' };
      case 'output':
        return method === 'GET' ? { endpoint: 'output', executionId: id } : { endpoint: 'unknown' };
      default:
        return { endpoint: 'unknown' };
    }
  }
  if (pathname === '/v1/openapi/workflows') return method === 'GET' ? { endpoint: 'search' } : { endpoint: 'unknown' };
  const detail = DETAIL.exec(pathname);
  if (detail !== null) return method === 'GET' ? { endpoint: 'detail', canvasId: decodeURIComponent(detail[1] ?? '') } : { endpoint: 'unknown' };
  if (pathname === '/v1/openapi/files/upload') return method === 'POST' ? { endpoint: 'upload' } : { endpoint: 'unknown' };
  if (pathname === '/v1/openapi/copilot/workflow/generate') return method === 'POST' ? { endpoint: 'copilot' } : { endpoint: 'unknown' };
  const file = PUBLIC_FILE.exec(pathname);
  if (file !== null && (method === 'GET' || method === 'HEAD')) {
    return { endpoint: 'file', fileId: decodeURIComponent(file[1] ?? ''), name: decodeURIComponent(file[2] ?? '') };
  }
  return { endpoint: 'unknown' };
}
