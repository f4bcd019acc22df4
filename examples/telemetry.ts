/**
 * OpenTelemetry traces and metrics of a run: the spans go to the console exporter as they end, then
 * the run's span tree and a few metrics are printed.
 *
 *   npx tsx examples/telemetry.ts [canvasId]      (default c-sample-files)
 *
 * In your code: `import { createTelemetry } from 'flowstream/otel'`, with the tracer and meter
 * providers of your OpenTelemetry setup (or none: the global ones).
 */
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, ConsoleSpanExporter, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { isWorkflowFailedError, runResult } from '../src/index.js';
import { createTelemetry } from '../src/otel/index.js';
import { connectForExample } from './example-connection.js';

/** Metrics read when the example asks, instead of on an exporter's timer. */
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

const canvasId = process.argv[2] ?? 'c-sample-files';
const finished = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter()), new SimpleSpanProcessor(finished)] });
const reader = new OnDemandReader();
const meterProvider = new MeterProvider({ readers: [reader] });
const { client, close } = await connectForExample([], { telemetry: createTelemetry({ tracerProvider, meterProvider }) });

let exitCode = 0;
try {
  const result = await runResult(client.run(canvasId));
  console.log(`run ${result.executionId}: ${result.endedBy}`);
} catch (error: unknown) {
  if (!isWorkflowFailedError(error)) throw error;
  console.log(`run ${error.result.executionId}: ${error.result.endedBy}`);
  exitCode = 1;
} finally {
  await close();
}

/** One line per span, indented under its parent: its name, what it is about, and how long it took. */
function tree(spans: readonly ReadableSpan[], parentId: string | undefined, depth: number): string[] {
  return spans
    .filter((span) => span.parentSpanContext?.spanId === parentId)
    .flatMap((span) => {
      const [seconds, nanos] = span.duration;
      const ms = Math.round(seconds * 1000 + nanos / 1e6);
      const about = span.name === 'flowstream.request'
        ? `${String(span.attributes['http.request.method'])} ${String(span.attributes['url.template'])} → ${String(span.attributes['http.response.status_code'])}`
        : `${String(span.attributes['flowstream.canvas_id'])} ended by ${String(span.attributes['flowstream.ended_by'])}, ${span.events.filter((event) => event.name === 'node').length} node events, ${span.events.filter((event) => event.name === 'file').length} files`;
      return [`${'  '.repeat(depth)}${span.name}  ${about}  (${ms} ms)`, ...tree(spans, span.spanContext().spanId, depth + 1)];
    });
}

console.log('\nspan tree:');
console.log(tree(finished.getFinishedSpans(), undefined, 1).join('\n'));

const { resourceMetrics } = await reader.collect();
console.log('\nmetrics:');
for (const metric of resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics)) {
  for (const point of metric.dataPoints) {
    const value = typeof point.value === 'number' ? point.value : `${point.value.count} recorded, sum ${Math.round(point.value.sum ?? 0)}`;
    console.log(`  ${metric.descriptor.name} ${JSON.stringify(point.attributes)} ${value}`);
  }
}
await tracerProvider.shutdown();
await meterProvider.shutdown();
process.exitCode = exitCode;
