import fc from 'fast-check';
import * as z from 'zod/mini';
import { describe, expect, it } from 'vitest';
import type { PlanVariable, VariableValue } from '../../src/domain/model.js';
import { planSchema } from '../../src/domain/plan-schema.js';
import { createClient } from '../../src/client.js';
import { createEmulator } from '../../src/emulator/index.js';

const plan = {
  variables: [
    { name: 'topic', variableType: 'string', required: true },
    { name: 'tone', variableType: 'option', required: false, options: ['formal', 'casual'] },
    { name: 'attachment', variableType: 'resource', required: false },
    { name: 'sources', variableType: 'resource', required: true },
    { name: 'extra', required: false },
  ] satisfies PlanVariable[],
};

const KEY = 'of_AAAAAAAAAAAAAAAAAAAAAA';

/** The first issue's variable and message, or undefined when the variables fit. */
function refusal(value: unknown): { path: readonly PropertyKey[]; message: string } | undefined {
  const checked = planSchema(plan).safeParse(value);
  return checked.success ? undefined : { path: checked.error.issues[0]?.path ?? [], message: checked.error.issues[0]?.message ?? '' };
}

describe('planSchema', () => {
  it.each([
    [{ topic: 'tides', sources: KEY }],
    [{ topic: 'tides', sources: [KEY, KEY], tone: 'casual', attachment: KEY }],
    [{ topic: 'tides', sources: [KEY], attachment: [] }],
    [{ topic: 'tides', sources: KEY, extra: { depth: 2 } }],
    [{ topic: 'tides', sources: KEY, extra: 3 }],
  ])('accepts %j', (variables) => {
    expect(refusal(variables)).toBeUndefined();
  });

  it.each([
    [{ sources: KEY }, 'topic', 'is required by the workflow and was not given'],
    [{ topic: '  ', sources: KEY }, 'topic', 'is required'],
    [{ topic: 3, sources: KEY }, 'topic', 'must be text, not 3'],
    [{ topic: 'x', sources: KEY, tone: 'rude' }, 'tone', '"rude" is not one of its options: "formal", "casual"'],
    [{ topic: 'x', sources: KEY, tone: ['formal'] }, 'tone', 'is not one of its options'],
    [{ topic: 'x' }, 'sources', 'is required'],
    [{ topic: 'x', sources: [] }, 'sources', 'is required'],
    [{ topic: 'x', sources: 'report.pdf' }, 'sources', '"report.pdf" is not a file key'],
    [{ topic: 'x', sources: [KEY, 'notes'] }, 'sources', '"notes" is not a file key'],
    [{ topic: 'x', sources: KEY, attachment: 7 }, 'attachment', '7 is not a file key'],
  ] as const)('refuses %j at %s', (variables, name, message) => {
    const found = refusal(variables);
    expect(found?.path[0]).toBe(name);
    expect(found?.message).toContain(message);
  });

  it('refuses a name the plan does not have, suggesting the nearest one', () => {
    const checked = planSchema(plan).safeParse({ topic: 'x', sources: KEY, topik: 'y' });
    expect(checked.error?.issues).toContainEqual(expect.objectContaining({ code: 'unrecognized_keys', keys: ['topik'], message: expect.stringContaining('did you mean `topic`?') as unknown }));
  });

  it('refuses every value of a plan with a variable named __proto__, at that name, rather than leave it unchecked', () => {
    const schema = planSchema({ variables: [{ name: '__proto__', variableType: 'string', required: true }, { name: 'topic', variableType: 'string', required: false }] });
    for (const variables of [{}, { topic: 'tides' }, JSON.parse('{"__proto__":"x"}') as unknown, JSON.parse('{"__proto__":5,"topic":"tides"}') as unknown]) {
      const checked = schema.safeParse(variables);
      expect(checked.success).toBe(false);
      expect(checked.error?.issues).toContainEqual(expect.objectContaining({ path: ['__proto__'], message: expect.stringContaining('cannot be checked') as unknown }));
    }
    expect(z.toJSONSchema(schema)).toMatchObject({ required: ['__proto__'] });
  });

  it('takes any value for a variable of a kind it does not know, but still requires a required one', () => {
    const schema = planSchema({ variables: [{ name: 'mystery', required: true }] });
    expect(schema.safeParse({ mystery: [1, { a: true }] }).success).toBe(true);
    expect(schema.safeParse({}).error?.issues[0]?.message).toBe('is required by the workflow and was not given');
  });

  it('is a Standard Schema', async () => {
    const standard = planSchema(plan)['~standard'];
    expect(standard).toMatchObject({ version: 1, vendor: 'zod' });
    expect(await standard.validate({ topic: 'tides', sources: KEY })).toEqual({ value: { topic: 'tides', sources: KEY } });
    const failed = await standard.validate({ topic: 'tides', sources: KEY, tone: 'loud' });
    expect('issues' in failed && failed.issues?.map((issue) => issue.path)).toEqual([['tone']]);
  });

  it('converts to JSON Schema through zod', () => {
    expect(z.toJSONSchema(planSchema(plan))).toMatchObject({
      type: 'object',
      additionalProperties: false,
      required: ['topic', 'sources'],
      properties: {
        topic: { type: 'string', minLength: 1 },
        tone: { type: 'string', enum: ['formal', 'casual'] },
        attachment: { anyOf: [{ type: 'string', pattern: '^of_' }, { type: 'array', items: { type: 'string', pattern: '^of_' } }] },
        sources: { anyOf: [{ type: 'string' }, { type: 'array', minItems: 1 }] },
        extra: {},
      },
    });
    // No `format` a strict JSON Schema validator (an agent host) would not know.
    expect(JSON.stringify(z.toJSONSchema(planSchema(plan)))).not.toContain('"format"');
  });
});

/** A plan of distinct variable names, each of a known kind. */
const plans = fc
  .uniqueArray(
    fc.record({
      name: fc.stringMatching(/^[a-z][a-zA-Z0-9_]{0,11}$/),
      variableType: fc.constantFrom('string', 'option', 'resource'),
      required: fc.boolean(),
      options: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 4 }),
    }),
    { selector: (variable) => variable.name, maxLength: 6 },
  )
  .map((variables): PlanVariable[] =>
    variables.map(({ options, ...variable }) => (variable.variableType === 'option' ? { ...variable, options } : variable)),
  );

/** A value that fits the variable, picked by `seed`. */
function fitting(variable: PlanVariable, seed: number): VariableValue {
  if (variable.variableType === 'option') return variable.options?.[seed % variable.options.length] ?? '';
  if (variable.variableType === 'resource') return seed % 2 === 0 ? KEY : [KEY, `of_${String(seed)}`];
  return `text ${String(seed)}`;
}

describe('planSchema over generated plans', () => {
  it('property: the plan\'s own variables with fitting values are accepted, and the JSON Schema requires exactly the required ones', () => {
    fc.assert(
      fc.property(plans, fc.nat(), fc.boolean(), (variables, seed, all) => {
        const given = Object.fromEntries(variables.filter((variable) => all || variable.required).map((variable) => [variable.name, fitting(variable, seed)]));
        const schema = planSchema({ variables });
        expect(schema.safeParse(given).success).toBe(true);
        const json = z.toJSONSchema(schema) as { required?: string[]; properties: Record<string, unknown> };
        expect(new Set(json.required ?? [])).toEqual(new Set(variables.filter((variable) => variable.required).map((variable) => variable.name)));
        expect(Object.keys(json.properties).sort()).toEqual(variables.map((variable) => variable.name).sort());
      }),
    );
  });

  it('property: leaving out a required variable, adding a name, or an option outside the list is refused at that name', () => {
    fc.assert(
      fc.property(plans, fc.nat(), fc.nat(), (variables, seed, pick) => {
        fc.pre(variables.length > 0);
        const given = Object.fromEntries(variables.map((variable) => [variable.name, fitting(variable, seed)]));
        const schema = planSchema({ variables });
        const target = variables[pick % variables.length];
        if (target === undefined) return;
        const stranger = `${target.name}_x`;
        fc.pre(!variables.some((variable) => variable.name === stranger));
        expect(schema.safeParse({ ...given, [stranger]: 'y' }).error?.issues).toContainEqual(expect.objectContaining({ code: 'unrecognized_keys', keys: [stranger] }));
        const without = Object.fromEntries(Object.entries(given).filter(([name]) => name !== target.name));
        const missing = schema.safeParse(without);
        expect(missing.success).toBe(!target.required);
        if (!missing.success) expect(missing.error.issues[0]?.path).toEqual([target.name]);
        if (target.variableType === 'option') {
          const outside = `${(target.options ?? []).join('')}!`;
          expect(schema.safeParse({ ...given, [target.name]: outside }).error?.issues[0]?.path).toEqual([target.name]);
        }
      }),
    );
  });
});

describe('client.workflows.schema', () => {
  it('is the schema of the plan that workflows.get reads', async () => {
    const emulator = await createEmulator({ rateLimit: false });
    try {
      const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, fetch: emulator.fetch });
      const schema = await client.workflows.schema('c-sample-variables');
      expect(schema.safeParse({ topic: 'tides', tone: 'casual' }).success).toBe(true);
      expect(schema.safeParse({ tone: 'casual' }).error?.issues[0]?.path).toEqual(['topic']);
      expect(z.toJSONSchema(schema)).toMatchObject({ required: ['topic'], properties: { tone: { enum: ['formal', 'casual'] } } });
      expect(emulator.requests.list({ endpoint: 'detail' })).toHaveLength(1);
    } finally {
      await emulator.close();
    }
  });
});
