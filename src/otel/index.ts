/**
 * `flowstream/otel`: OpenTelemetry traces and metrics of a client's requests, runs and pipelines.
 *
 * @example
 * ```ts
 * import { createClient } from 'flowstream';
 * import { createTelemetry } from 'flowstream/otel';
 * const client = createClient({ apiKey, baseUrl, telemetry: createTelemetry({ tracerProvider, meterProvider }) });
 * ```
 */
export { createTelemetry, type TelemetryOptions } from './telemetry.js';
export { detectionLatencies, type DetectionLatency, type SeenTransitions } from './detection-latency.js';
