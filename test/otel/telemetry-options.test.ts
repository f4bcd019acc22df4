import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { createTelemetry } from '../../src/otel/index.js';

describe('createTelemetry options', () => {
  it.each<[string, unknown, string]>([
    ['null options', null, 'options'],
    ['a tracer provider that is not one', { tracerProvider: {} }, 'tracerProvider'],
    ['a tracer instead of its provider', { tracerProvider: new BasicTracerProvider().getTracer('app') }, 'tracerProvider'],
    ['a meter provider that is not one', { meterProvider: 42 }, 'meterProvider'],
    ["propagate: 'true', a string (silently off)", { propagate: 'true' }, 'propagate'],
    ['a misspelt option', { tracerprovider: new BasicTracerProvider() }, 'options.tracerprovider'],
    ['an empty account', { account: '' }, 'account'],
    ['an account that is not a string', { account: 7 }, 'account'],
  ])('refuses %s with InvalidArgumentError naming it, not a TypeError', (_name, options, argument) => {
    expect(() => createTelemetry(options as never)).toThrow(expect.objectContaining({ name: 'InvalidArgumentError', argument }));
  });
});
