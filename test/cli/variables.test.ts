import { describe, expect, it } from 'vitest';
import { collectAssignment, parseAssignment } from '../../src/cli/assignments.js';
import { runVariables } from '../../src/cli/variables.js';

describe('--var and --file values', () => {
  it('splits name=value at the first =', () => {
    expect(parseAssignment('query=a=b', '--var')).toEqual({ name: 'query', value: 'a=b' });
    expect(parseAssignment('empty=', '--var')).toEqual({ name: 'empty', value: '' });
  });

  it.each(['topic', '=value', ' =x'])('refuses "%s" as a usage error', (text) => {
    expect(() => parseAssignment(text, '--var')).toThrow(/--var expects name=value/u);
  });

  it('collects repeated options in order', () => {
    const collect = collectAssignment('--var');
    expect(collect('b=2', collect('a=1', []))).toEqual([{ name: 'a', value: '1' }, { name: 'b', value: '2' }]);
  });

  it('makes a name given twice a list and adds the uploaded files', () => {
    const vars = [{ name: 'topic', value: 'tides' }, { name: 'tag', value: 'a' }, { name: 'tag', value: 'b' }];
    expect(runVariables(vars, { attachment: ['of_1'] })).toEqual({ topic: 'tides', tag: ['a', 'b'], attachment: ['of_1'] });
  });

  it('refuses a name given both as --var and --file', () => {
    expect(() => runVariables([{ name: 'attachment', value: 'x' }], { attachment: ['of_1'] })).toThrow(/both as --var and as --file/u);
  });
});
