/**
 * A child process of `bench/relay.ts`: holds some of the relay's viewers, each an HTTP connection to
 * an execution's event stream read as server-sent events. For every event it tells the parent when the
 * last of this process's viewers of that execution got it (absolute ms: `performance.timeOrigin + now`).
 *
 * Messages in: `{ kind: 'connect', relay, viewers: [{ executionId, token }] }`, `{ kind: 'close' }`.
 * Messages out: `{ kind: 'connected', count }` once every stream of that message answered,
 * `{ kind: 'event', executionId, seq, type, at }`, `{ kind: 'ended', count }` as streams end.
 */
import { type ClientRequest, request } from 'node:http';

interface Viewer {
  readonly executionId: string;
  readonly token: string;
}

type Incoming = { readonly kind: 'connect'; readonly relay: string; readonly viewers: readonly Viewer[] } | { readonly kind: 'close' };

const now = (): number => performance.timeOrigin + performance.now();
const send = (message: unknown): void => {
  process.send?.(message);
};

/** Per execution: how many of this process's viewers follow it, and per event how many got it so far. */
const viewersOf = new Map<string, number>();
const received = new Map<string, number>();
const open = new Set<ClientRequest>();
let ended = 0;

function follow(relay: string, viewer: Viewer): Promise<void> {
  return new Promise((resolve, reject) => {
    const url = new URL(`${relay}/executions/${encodeURIComponent(viewer.executionId)}/events`);
    const call = request(url, { headers: { accept: 'text/event-stream', authorization: `Bearer ${viewer.token}` }, agent: false }, (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`stream of ${viewer.executionId}: HTTP ${String(response.statusCode)}`));
        return;
      }
      resolve();
      response.setEncoding('utf8');
      let buffer = '';
      let id = '';
      let type = '';
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let newline = buffer.indexOf('\n');
        while (newline >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          if (line === '') {
            if (id !== '' && type !== '') arrived(viewer.executionId, Number(id), type);
            id = '';
            type = '';
          } else if (line.startsWith('id: ')) id = line.slice(4);
          else if (line.startsWith('event: ')) type = line.slice(7);
          newline = buffer.indexOf('\n');
        }
      });
      response.on('end', () => {
        open.delete(call);
        ended += 1;
        send({ kind: 'ended', count: ended });
      });
    });
    call.on('error', (error) => {
      open.delete(call);
      reject(error);
    });
    open.add(call);
    call.end();
  });
}

function arrived(executionId: string, seq: number, type: string): void {
  const key = `${executionId} ${seq}`;
  const count = (received.get(key) ?? 0) + 1;
  received.set(key, count);
  if (count === viewersOf.get(executionId)) {
    received.delete(key);
    send({ kind: 'event', executionId, seq, type, at: now() });
  }
}

process.on('message', (message: Incoming) => {
  if (message.kind === 'close') {
    for (const call of open) call.destroy();
    process.disconnect();
    return;
  }
  for (const viewer of message.viewers) viewersOf.set(viewer.executionId, (viewersOf.get(viewer.executionId) ?? 0) + 1);
  Promise.all(message.viewers.map((viewer) => follow(message.relay, viewer))).then(
    () => { send({ kind: 'connected', count: message.viewers.length }); },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
});
