/**
 * A React card for one run, on `runStore`: React's `useSyncExternalStore` takes the store as it is — no
 * framework glue in flowstream. The card shows each task node with its status, time and text, and the
 * files once the run is over. React is a devDependency of this example only; flowstream depends on no
 * framework.
 */
import { useSyncExternalStore } from 'react';
import type { NodeState, RunState, RunStore } from '../../src/index.js';

function seconds(ms: number | undefined): string {
  return ms === undefined ? '' : `${(ms / 1000).toFixed(1)} s`;
}

function NodeRow({ node }: { readonly node: NodeState }) {
  return (
    <li data-node-id={node.nodeId} data-status={node.status}>
      <strong>{node.title ?? node.nodeId}</strong> {node.status} {seconds(node.elapsedMs)}
      {node.text === '' ? null : <p>{node.text}</p>}
    </li>
  );
}

/** The run as a card: progress over task nodes, the nodes, the files at the end. */
export function RunCard({ store }: { readonly store: RunStore }) {
  // The third argument serves server rendering (and tests): the same snapshot.
  const state: RunState | undefined = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
  if (state === undefined) return <section data-state="starting">Starting…</section>;
  const phase = state.result?.status ?? 'running';
  return (
    <section data-state={phase}>
      <h2>
        {state.progress.succeeded}/{state.progress.total} steps{state.progress.failed > 0 ? ` (${state.progress.failed} failed)` : ''} · {phase}
      </h2>
      <ol>
        {state.nodes.filter((node) => node.task).map((node) => (
          <NodeRow key={node.nodeId} node={node} />
        ))}
      </ol>
      {state.result === undefined ? null : (
        <ul>
          {state.files.map((file) => (
            <li key={`${file.nodeId ?? ''}/${file.name}`}>{file.url === undefined ? file.name : <a href={file.url}>{file.name}</a>}</li>
          ))}
        </ul>
      )}
    </section>
  );
}
