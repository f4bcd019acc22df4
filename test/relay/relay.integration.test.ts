import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runResult } from '../../src/runs/run-result.js';
import { allEvents, rebuiltMessages, type RelayWorld, relayWorld, withoutConnection } from './harness.js';

const open: RelayWorld[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((world) => world.close()));
});

async function world(...args: Parameters<typeof relayWorld>): Promise<RelayWorld> {
  const made = await relayWorld(...args);
  open.push(made);
  return made;
}

describe('the run relay: one follow of an execution, shared by every viewer', () => {
  it('gives two viewers and a late third the same events, ending with the result client.watch gives', async () => {
    const { client, emulator, token, view } = await world();
    const { executionId } = await client.executions.start('c-sample-linear');
    const readToken = await token(executionId);
    const first = allEvents(view(executionId, readToken));
    const second = allEvents(view(executionId, readToken));
    await firstValueFrom(view(executionId, readToken).pipe(filter((event) => event.type === 'message')));
    const late = allEvents(view(executionId, readToken));
    const reference = runResult(client.watch(executionId));
    const [a, b, c] = await Promise.all([first, second, late]);
    expect(b).toEqual(a);
    expect(c).toEqual(a);
    expect(a.at(-1)).toEqual({ type: 'finished', executionId, result: await reference });
    expect(rebuiltMessages(a)).toEqual(Object.fromEntries((await reference).output.flatMap((node) => node.messages.map((message) => [message.messageId, message.content]))));
    expect(emulator.requests.list({ endpoint: 'abort' })).toHaveLength(0);
  });
});
