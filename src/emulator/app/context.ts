import type { Clock } from '../clock.js';
import type { Profile } from '../options.js';
import type { CorsPolicy } from './cors.js';
import type { ExecutionStore } from '../state/execution-store.js';
import type { FaultRegistry } from '../state/faults.js';
import type { IpThrottler } from '../state/ip-throttler.js';
import type { RateLimiter } from '../state/rate-limiter.js';
import type { RequestLog } from '../state/request-log.js';
import type { RunDebounce } from '../state/run-debounce.js';
import type { UploadStore } from '../state/upload-store.js';
import type { WorkflowRegistry } from '../state/workflow-registry.js';

/** Everything the HTTP app reads and changes: the emulator's state. */
export interface AppContext {
  readonly profile: Profile;
  readonly clock: Clock;
  /** The API base, `http://127.0.0.1:<port>/v1`; output file links point under it. */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** Which web pages may call it from a browser. */
  readonly cors: CorsPolicy;
  readonly workflows: WorkflowRegistry;
  readonly executions: ExecutionStore;
  readonly uploads: UploadStore;
  /** Undefined when the rate limit is off. */
  readonly rateLimiter: RateLimiter | undefined;
  /** The per-IP throttler's counters; undefined in the `spec` profile and when the rate limit is off. */
  readonly throttler: IpThrottler | undefined;
  readonly debounce: RunDebounce;
  readonly requests: RequestLog;
  readonly faults: FaultRegistry;
  /** Aborted when the emulator closes: cuts injected latency short. */
  readonly closing: AbortSignal;
}
