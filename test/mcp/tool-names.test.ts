import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GENERAL_TOOL_NAMES, MAX_TOOL_NAME_LENGTH, sanitiseToolName, uniqueToolNames } from '../../src/mcp/tool-names.js';

/** What the strictest hosts accept as a tool name. */
const HOST_RULE = /^[A-Za-z0-9_-]{1,64}$/u;

describe('tool names', () => {
  it.each([
    ['Personalised newsletter (variables)', 'Personalised_newsletter_variables'],
    ['résumé – draft', 'resume_draft'],
    ['  summarise/pdf  ', 'summarise_pdf'],
    ['日本語', 'workflow'],
    ['', 'workflow'],
    ['run-report_v2', 'run-report_v2'],
  ])('makes %j a name every host takes: %j', (wanted, name) => {
    expect(sanitiseToolName(wanted)).toBe(name);
  });

  it('cuts a long name to 64 characters, without a separator at its end', () => {
    expect(sanitiseToolName(`${'a'.repeat(63)} b`)).toBe('a'.repeat(63));
  });

  it('numbers a name already taken, by a general tool or an earlier workflow, case aside', () => {
    expect(uniqueToolNames(['notes', 'Notes', 'run_workflow', 'notes_2'], GENERAL_TOOL_NAMES)).toEqual(['notes', 'Notes_2', 'run_workflow_2', 'notes_2_2']);
  });

  it('gives names that every host takes, unique among themselves and apart from the taken ones, one per wanted name', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string({ maxLength: 80 }), fc.constantFrom(...GENERAL_TOOL_NAMES, 'notes', 'x'.repeat(70))), { maxLength: 30 }), (wanted) => {
        const names = uniqueToolNames(wanted, GENERAL_TOOL_NAMES);
        expect(names).toHaveLength(wanted.length);
        for (const name of names) {
          expect(name).toMatch(HOST_RULE);
          expect(name.length).toBeLessThanOrEqual(MAX_TOOL_NAME_LENGTH);
        }
        const folded = [...names, ...GENERAL_TOOL_NAMES].map((name) => name.toLowerCase());
        expect(new Set(folded).size).toBe(folded.length);
      }),
    );
  });

  it('keeps a name that is already valid and free as it is', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_]{0,40}[A-Za-z0-9]$/u), (name) => {
        fc.pre(!GENERAL_TOOL_NAMES.includes(name.toLowerCase() as (typeof GENERAL_TOOL_NAMES)[number]));
        expect(uniqueToolNames([name], GENERAL_TOOL_NAMES)).toEqual([name]);
      }),
    );
  });
});
