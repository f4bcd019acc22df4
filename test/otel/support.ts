import type { Tracer } from '@opentelemetry/api';
import { AggregationTemporality, MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, type IdGenerator, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createTelemetry } from '../../src/otel/index.js';
import type { ClientTelemetry } from '../../src/client.js';

/**
 * Span and trace ids counted up: unique whatever `Math.random` does (the emulator tests fix it, for
 * the cadence's jitter, and the SDK's own generator draws its ids from it).
 */
class CountingIds implements IdGenerator {
  #next = 0;
  generateTraceId(): string {
    this.#next += 1;
    return this.#next.toString(16).padStart(32, '0');
  }
  generateSpanId(): string {
    this.#next += 1;
    return this.#next.toString(16).padStart(16, '0');
  }
}

/** A metric reader collected on demand: no timers. */
class OnDemandReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** One metric's data points, by name. */
export type Points = readonly DataPoint<number | Histogram>[];

/** The real SDK with in-memory export: spans as they end, metrics when collected. */
export interface Recorded {
  readonly telemetry: ClientTelemetry;
  /** A tracer of the same provider, for spans of the test's own. */
  readonly tracer: Tracer;
  /** The meter provider, for telemetries of the test's own read by the same reader. */
  readonly meterProvider: MeterProvider;
  spans(): ReadableSpan[];
  /** The data points of one metric (empty when it has none). */
  metric(name: string): Promise<Points>;
  close(): Promise<void>;
}

export function recordTelemetry(options: { readonly propagate?: boolean } = {}): Recorded {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ idGenerator: new CountingIds(), spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new OnDemandReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    telemetry: createTelemetry({ tracerProvider, meterProvider, ...options }),
    tracer: tracerProvider.getTracer('test'),
    meterProvider,
    spans: () => exporter.getFinishedSpans(),
    metric: async (name) => {
      const { resourceMetrics } = await reader.collect();
      const found = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((metric) => metric.descriptor.name === name);
      return (found?.dataPoints ?? []) as Points;
    },
    close: async () => {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/** The span's parent span id, or undefined for a root. */
export function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

/** The spans directly under `parent`. */
export function childrenOf(spans: readonly ReadableSpan[], parent: ReadableSpan): ReadableSpan[] {
  return spans.filter((span) => parentOf(span) === parent.spanContext().spanId);
}

/** A counter's value for the data point whose attributes include `attributes` (0 when none). */
export function sumOf(points: Points, attributes: Readonly<Record<string, string>> = {}): number {
  return points
    .filter((point) => Object.entries(attributes).every(([key, value]) => point.attributes[key] === value))
    .reduce((total, point) => total + (typeof point.value === 'number' ? point.value : point.value.count), 0);
}
