/**
 * A page on its own origin that follows a run with `useRun(connectRun(...))` through a run relay on
 * another origin, in StrictMode. The fragment carries the relay's events URL and token, and the
 * emulator's URL and key: the page shows that a direct call to the API fails in the browser.
 */
import { StrictMode, useEffect, useMemo } from 'react';
import { createRoot } from 'react-dom/client';
import { connectRun } from '../../../src/runs/connect-run.js';
import { useRun } from '../../../src/react/index.js';

const fragment = new URLSearchParams(location.hash.slice(1));
const setting = (name: string): string => fragment.get(name) ?? '';

/** Every progress the page rendered, for the test to read. */
const shown: string[] = [];
(globalThis as { shownProgress?: string[] }).shownProgress = shown;

function Progress({ eventsUrl, token }: { readonly eventsUrl: string; readonly token: string }) {
  const run$ = useMemo(() => connectRun(eventsUrl, { token }), [eventsUrl, token]);
  const state = useRun(run$);
  const line = state === undefined ? 'connecting' : `${state.status ?? '?'} ${state.progress.succeeded}/${state.progress.total}`;
  useEffect(() => {
    shown.push(line);
  }, [line]);
  return (
    <section data-testid="run" data-state={state?.result?.status ?? 'running'}>
      <p data-testid="progress">{line}</p>
      <ol>
        {state?.nodes.filter((node) => node.task).map((node) => (
          <li key={node.nodeId} data-testid="node" data-status={node.status}>{node.title ?? node.nodeId}: {node.text}</li>
        ))}
      </ol>
    </section>
  );
}

/** Calls the API itself, as a page must not: the browser refuses (the emulator, like the service, answers no page). */
async function directCall(): Promise<string> {
  try {
    const response = await fetch(`${setting('apiUrl')}/openapi/workflows`, { headers: { Authorization: `Bearer ${setting('apiKey')}` } });
    return `answered ${response.status}`;
  } catch (error) {
    return `refused: ${error instanceof Error ? error.name : 'unknown'}`;
  }
}

void directCall().then((outcome) => {
  document.querySelector('[data-testid="direct"]')!.textContent = outcome;
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Progress eventsUrl={setting('eventsUrl')} token={setting('token')} />
  </StrictMode>,
);
