import { describe, expect, it } from 'vitest';
import { NetworkError, PermissionError } from '../../src/index.js';
import { PendingAborts } from '../../src/cli/pending-aborts.js';

function ledger(): { aborts: PendingAborts; said: () => string; failures: () => number } {
  let said = '';
  let failures = 0;
  const aborts = new PendingAborts(
    (text) => {
      said += text;
    },
    () => {
      failures += 1;
    },
  );
  return { aborts, said: () => said, failures: () => failures };
}

describe('PendingAborts', () => {
  it('says an abort that could not be sent, with the execution and how to abort it later', () => {
    const { aborts, said, failures } = ledger();
    aborts.ask('we-1');
    aborts.fail('we-1', new PermissionError({ endpoint: 'abort', status: 403, executionId: 'we-1' }));
    expect(said()).toMatch(/^Could not abort execution we-1: .+\n/u);
    expect(said()).toContain('Execution we-1 may still be running, and spending credits. Abort it with: flowstream abort we-1\n');
    expect(aborts.failed).toBe(true);
    expect(failures()).toBe(1);
    // Already said: giving up on the wait adds nothing about it.
    expect(aborts.giveUp(35_000)).toBe(false);
  });

  it('on giving up the wait, names each abort still unanswered, and a run whose start never answered', () => {
    const { aborts, said } = ledger();
    expect(aborts.giveUp(35_000)).toBe(false);
    expect(said()).toBe('');
    aborts.ask('we-2');
    aborts.ask(undefined);
    expect(aborts.giveUp(35_000)).toBe(true);
    expect(said()).toContain('No answer after 35 s to the abort of execution we-2.\nExecution we-2 may still be running, and spending credits. Abort it with: flowstream abort we-2\n');
    expect(said()).toContain('No answer after 35 s to the start of the run that was to be aborted: an execution may have started, and still be running.\n');
    expect(aborts.failed).toBe(false);
  });

  it('names the address it could not reach, without its credentials', () => {
    const { aborts, said } = ledger();
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    aborts.fail('we-4', new NetworkError({ endpoint: 'abort', executionId: 'we-4', cause: refused }), 'http://user:secret@127.0.0.1:9/v1');
    expect(said()).toContain('Could not abort execution we-4: Could not connect to http://127.0.0.1:9/v1 (ECONNREFUSED) for abort: nothing was sent.\n');
    expect(said()).not.toContain('secret');
  });

  it('keeps terminal control sequences of an id out of what it says', () => {
    const { aborts, said } = ledger();
    aborts.fail('we-3\u001b[2J', new NetworkError({ endpoint: 'abort' }));
    expect(said()).not.toContain('\u001b');
  });
});
