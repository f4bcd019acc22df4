/** What a request to the relay asks for, by method and path under the base path. */
export type RelayRoute =
  | { readonly kind: 'events'; readonly executionId: string }
  | { readonly kind: 'cancel'; readonly executionId: string }
  | { readonly kind: 'start' }
  | { readonly kind: 'preflight' }
  | { readonly kind: 'method-not-allowed'; readonly allow: string }
  | { readonly kind: 'not-found' };

/**
 * The route of `method` and `pathname` under `basePath` (`''` or `/flowstream`, no trailing slash):
 * `GET /executions/:id/events`, `POST /executions/:id/cancel`, `POST /runs`, and `OPTIONS` on any of
 * them for a CORS preflight.
 */
export function routeOf(method: string, pathname: string, basePath: string): RelayRoute {
  if (!pathname.startsWith(`${basePath}/`)) return { kind: 'not-found' };
  const segments = pathname.slice(basePath.length + 1).split('/');
  const wanted = wantedRoute(segments);
  if (wanted === undefined) return { kind: 'not-found' };
  if (method === 'OPTIONS') return { kind: 'preflight' };
  if (method !== wanted.method) return { kind: 'method-not-allowed', allow: `${wanted.method}, OPTIONS` };
  return wanted.route;
}

function wantedRoute(segments: readonly string[]): { readonly method: 'GET' | 'POST'; readonly route: RelayRoute } | undefined {
  const [first, id, action, ...rest] = segments;
  if (first === 'runs' && id === undefined) return { method: 'POST', route: { kind: 'start' } };
  if (first !== 'executions' || id === undefined || rest.length > 0) return undefined;
  const executionId = decodedSegment(id);
  if (executionId === undefined) return undefined;
  if (action === 'events') return { method: 'GET', route: { kind: 'events', executionId } };
  if (action === 'cancel') return { method: 'POST', route: { kind: 'cancel', executionId } };
  return undefined;
}

function decodedSegment(segment: string): string | undefined {
  try {
    const decoded = decodeURIComponent(segment);
    return decoded === '' ? undefined : decoded;
  } catch {
    return undefined;
  }
}

/** The base path as routes compare it: `''` for the root, else one leading slash and none trailing. */
export function normalizedBasePath(basePath: string | undefined): string {
  const trimmed = (basePath ?? '').replace(/\/+$/u, '');
  return trimmed === '' || trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}
