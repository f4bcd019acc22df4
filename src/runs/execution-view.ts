import type { ExecutionOutput, ExecutionSnapshot, ExecutionStatus, NodeExecution, NodeStatus, OutputFile, OutputMessage, OutputNode, RunResult } from '../domain/model.js';
import type { MessageEvent, NodeEvent, RunEvent } from './events.js';

/*
 * What a run knows of its execution (`ExecutionView`), and how each read moves it on: a status or
 * output read compared with the view gives the read's events (`diffStatus`,
 * `diffOutput`), and the view at the end gives the run's result (`runResultOf`). Pure functions: the
 * poll (poll.ts) holds the view, the run's reader (run-state.ts) makes the state of each read.
 */

/**
 * How far a node has come on its one-way path `init → waiting → executing → finish | failed`
 * (service.md §3.2; `waiting` only in the spec, §3.1). `unknown` ranks below everything: a value we do
 * not know never overwrites one we do, and any known status moves a node on from it.
 */
export function nodeRank(status: NodeStatus): number {
  return NODE_RANKS[status];
}

/** Every node status's rank: a `Record` over the union, so a status added to it and not here fails to compile. */
const NODE_RANKS: Readonly<Record<NodeStatus, number>> = { unknown: -1, init: 0, waiting: 1, executing: 2, finish: 3, failed: 3 };

/** A message as the run has seen it so far, keyed by node and message id. */
export interface MessageView {
  readonly nodeId: string;
  readonly message: OutputMessage;
}

/**
 * Everything a run has learned about its execution: what the snapshot differ compares the next poll
 * against. Maps keep first-seen order, which is the service's parents-before-children order (service.md §4.1).
 */
export interface ExecutionView {
  readonly executionId: string;
  /** The last known execution status; `undefined` before the first read. */
  readonly status: ExecutionStatus | undefined;
  /** Each node at the furthest status it has reached. */
  readonly nodes: ReadonlyMap<string, NodeExecution>;
  /** Every message that has had text, at its latest text. */
  readonly messages: ReadonlyMap<string, MessageView>;
  /** The task nodes of the latest output read (service.md §4.2). */
  readonly outputNodes: readonly OutputNode[];
  /** Every file seen, at its fullest details, in first-seen order. */
  readonly files: readonly OutputFile[];
  /**
   * Indexes in `files` of files listed without a `url` yet, whose `file` event waits for it (or for the
   * end): one file, one event, and one a consumer can download from.
   */
  readonly heldFiles: ReadonlySet<number>;
  /** Odd answers already logged, so each is logged once. */
  readonly reported: ReadonlySet<string>;
}

// Shared by every view that has none: a view is never changed in place (each read copies what it
// changes), and most runs hold no message, held file or odd answer for long, or ever.
const NO_MESSAGES: ReadonlyMap<string, MessageView> = new Map();
const NO_INDEXES: ReadonlySet<number> = new Set();
const NO_KEYS: ReadonlySet<string> = new Set();

/** The view before any poll; `status` is what the start answered, when there was one. */
export function initialView(executionId: string, status?: ExecutionStatus): ExecutionView {
  return {
    executionId,
    status,
    nodes: new Map(),
    messages: NO_MESSAGES,
    outputNodes: [],
    files: [],
    heldFiles: NO_INDEXES,
    reported: NO_KEYS,
  };
}

export function messageKey(nodeId: string, messageId: string): string {
  return `${nodeId}\u0000${messageId}`;
}

/**
 * service.md §4.6 gives files no id. A file is the same file as one seen before when name and type match
 * and no node or size they both have differs: a listing that adds the `nodeId` or `size` it lacked is
 * that file's details arriving, not a second file; two files of one name on different nodes stay two.
 * The `url` is no part of it: a signed link may change on every read while the file stays the same.
 */
export function sameFile(known: OutputFile, seen: OutputFile): boolean {
  const agree = (key: 'nodeId' | 'size'): boolean => known[key] === undefined || seen[key] === undefined || known[key] === seen[key];
  return known.name === seen.name && known.type === seen.type && agree('nodeId') && agree('size');
}

// Parts of a file's key: a detail the file lacks, and any value of it.
const LACKING = '\u0001lacking';
const ANY = '\u0001any';

function fileKey(file: OutputFile, node: string, size: string): string {
  return `${file.name}\u0000${file.type}\u0000${node}\u0000${size}`;
}

const fileNodeOf = (file: OutputFile): string => file.nodeId ?? LACKING;
const sizeOf = (file: OutputFile): string => (file.size === undefined ? LACKING : String(file.size));

/**
 * Finds which of the files seen so far a listed file is (see {@link sameFile}) with a few map look-ups
 * instead of a scan of them all: a listing of n files costs O(n), not O(n²). Each file is filed under
 * its name, type, node and size (a missing detail is a value of its own), so a listing with every
 * detail finds the file that has them, or one that lacked some. A listing without a node or a size
 * needs wildcards: those keys are filed only once such a listing comes. The first file filed under a
 * key keeps it.
 */
class FileIndex {
  readonly #files: readonly OutputFile[];
  readonly #exact = new Map<string, number>();
  #partial: Map<string, number> | undefined;

  /** Indexes `files`, which the caller may push to and update in place, telling `add`. */
  constructor(files: readonly OutputFile[]) {
    this.#files = files;
    files.forEach((file, index) => {
      this.add(file, index);
    });
  }

  /** Files `file`, at `index` in the list. */
  add(file: OutputFile, index: number): void {
    const node = fileNodeOf(file);
    const size = sizeOf(file);
    fileOnce(this.#exact, fileKey(file, node, size), index);
    if (this.#partial !== undefined) for (const key of partialKeys(file, node, size)) fileOnce(this.#partial, key, index);
  }

  /** The index in the list of the file `seen` is, if it was seen before. */
  find(seen: OutputFile): number | undefined {
    // Its own details first, then a file that lacked them; a detail `seen` lacks matches any value.
    const nodes = seen.nodeId === undefined ? [ANY] : [seen.nodeId, LACKING];
    const sizes = seen.size === undefined ? [ANY] : [String(seen.size), LACKING];
    const index = seen.nodeId !== undefined && seen.size !== undefined ? this.#exact : this.#partialIndex();
    for (const node of nodes) {
      for (const size of sizes) {
        const place = index.get(fileKey(seen, node, size));
        const known = place === undefined ? undefined : this.#files[place];
        if (known !== undefined && sameFile(known, seen)) return place;
      }
    }
    return undefined;
  }

  #partialIndex(): Map<string, number> {
    if (this.#partial !== undefined) return this.#partial;
    const partial = new Map<string, number>();
    this.#files.forEach((file, place) => {
      for (const key of partialKeys(file, fileNodeOf(file), sizeOf(file))) fileOnce(partial, key, place);
    });
    this.#partial = partial;
    return partial;
  }
}

function partialKeys(file: OutputFile, node: string, size: string): readonly string[] {
  return [fileKey(file, node, ANY), fileKey(file, ANY, size), fileKey(file, ANY, ANY)];
}

function fileOnce(index: Map<string, number>, key: string, place: number): void {
  if (!index.has(key)) index.set(key, place);
}

/** `known` with every detail `seen` adds, and its newest `url`. */
function withDetails(known: OutputFile, seen: OutputFile): OutputFile {
  return {
    ...known,
    ...(seen.nodeId === undefined ? {} : { nodeId: seen.nodeId }),
    ...(seen.url === undefined ? {} : { url: seen.url }),
    ...(seen.size === undefined ? {} : { size: seen.size }),
  };
}

/** The execution has ended: `finish` or `failed` are its only terminal statuses (service.md §3.3, §3.5). */
export function isExecutionOver(status: ExecutionStatus | undefined): status is 'finish' | 'failed' {
  return status === 'finish' || status === 'failed';
}

/** Something odd in an answer, for the logger: the differ stays pure and the shell logs. */
export interface DiffWarning {
  readonly message: string;
  readonly meta: Readonly<Record<string, unknown>>;
}

/** What one read changed: the events to emit, in order, and the view to compare the next read to. */
export interface ViewDiff {
  readonly view: ExecutionView;
  readonly events: readonly RunEvent[];
  readonly warnings: readonly DiffWarning[];
}

/**
 * Collects warnings, each odd answer once per run: the set of reported keys lives in the view, so an
 * unknown status seen on every poll is logged the first time only.
 */
class WarningLog {
  readonly warnings: DiffWarning[] = [];
  #reported: ReadonlySet<string>;
  /** The view's set was copied: it is this log's to add to. */
  #copied = false;

  constructor(reported: ReadonlySet<string>) {
    this.#reported = reported;
  }

  once(key: string, message: string, meta: Readonly<Record<string, unknown>>): void {
    if (this.#reported.has(key)) return;
    const reported = this.#copied ? (this.#reported as Set<string>) : new Set(this.#reported);
    reported.add(key);
    this.#reported = reported;
    this.#copied = true;
    this.warnings.push({ message, meta });
  }

  /** The keys reported so far: the view's own set when nothing new was. */
  get reported(): ReadonlySet<string> {
    return this.#reported;
  }
}

function nodeEvent(executionId: string, node: NodeExecution, previous: NodeExecution | undefined): NodeEvent {
  return {
    type: 'node',
    executionId,
    nodeId: node.nodeId,
    status: node.status,
    ...(node.title === undefined ? {} : { title: node.title }),
    ...(previous === undefined ? {} : { previous: previous.status }),
    ...(node.error === undefined ? {} : { error: node.error }),
  };
}

/** Only a node's own fields: an output node (service.md §4.2) also carries its messages and times. */
function nodeOf({ nodeId, status, rawStatus, title, error }: NodeExecution): NodeExecution {
  return { nodeId, status, rawStatus, ...(title === undefined ? {} : { title }), ...(error === undefined ? {} : { error }) };
}

/**
 * The `listed` nodes moved forward from `known`, pushing one event per node that moved: `known` itself
 * when no node changed (a quiet read copies nothing).
 */
function moveNodes(executionId: string, known: ReadonlyMap<string, NodeExecution>, listed: readonly NodeExecution[], log: WarningLog, events: RunEvent[]): ReadonlyMap<string, NodeExecution> {
  let moved: Map<string, NodeExecution> | undefined;
  const set = (node: NodeExecution): void => {
    (moved ??= new Map(known)).set(node.nodeId, node);
  };
  for (const listing of listed) {
    const was = (moved ?? known).get(listing.nodeId);
    if (listing.status === 'unknown') {
      log.once(`node:${listing.nodeId}:${listing.rawStatus}`, 'Unknown node status', { executionId, nodeId: listing.nodeId, status: listing.rawStatus });
    }
    if (was === undefined) {
      const node = nodeOf(listing);
      set(node);
      events.push(nodeEvent(executionId, node, undefined));
    } else if (nodeRank(listing.status) > nodeRank(was.status)) {
      const node = nodeOf(listing);
      set(node);
      events.push(nodeEvent(executionId, node, was));
    } else if (listing.status === was.status) {
      // Same status: keep the fresher title and error without an event; an answer that lacks one (an
      // output node's error may be `null`, service.md §4.2, §4.3) does not take it away. Nothing fresher: the node stays as it was.
      const title = listing.title ?? was.title;
      const error = listing.error ?? was.error;
      if (listing.rawStatus === was.rawStatus && title === was.title && error === was.error) continue;
      set({ ...nodeOf(listing), ...(title === undefined ? {} : { title }), ...(error === undefined ? {} : { error }) });
    } else if (listing.status !== 'unknown') {
      log.once(`regress:${listing.nodeId}:${was.status}:${listing.status}`, 'Ignored a node status that went backwards', {
        executionId,
        nodeId: listing.nodeId,
        from: was.status,
        to: listing.status,
      });
    }
  }
  return moved ?? known;
}

/**
 * Compares a status answer with the view: a `status` event when the execution's status changed, then
 * one `node` event per node that moved forward, in the answer's parents-before-children order
 * (service.md §4.1). A node that jumped several steps between two polls gives one event from where it
 * was. An answer that would move a node backwards (a stale read) or to a status we do not know is not
 * believed: the node keeps its furthest status and the oddity is logged once.
 */
export function diffStatus(view: ExecutionView, snapshot: ExecutionSnapshot): ViewDiff {
  const log = new WarningLog(view.reported);
  const events: RunEvent[] = [];
  const { executionId } = view;

  let status = view.status;
  if (snapshot.status === 'unknown') {
    log.once(`execution:${snapshot.rawStatus}`, 'Unknown execution status', { executionId, status: snapshot.rawStatus });
  }
  if (snapshot.status !== status && (snapshot.status !== 'unknown' || status === undefined)) {
    events.push({ type: 'status', executionId, status: snapshot.status, ...(status === undefined ? {} : { previous: status }) });
    status = snapshot.status;
  }

  const nodes = moveNodes(executionId, view.nodes, snapshot.nodes, log, events);
  return { view: { ...view, status, nodes, reported: log.reported }, events, warnings: log.warnings };
}

function roleOf(message: OutputMessage, log: WarningLog, executionId: string): MessageEvent['role'] {
  switch (message.type) {
    case 'ai':
    case 'tool':
      return message.type;
    case 'unknown':
      // Its text is still the node's output: deliver it as the AI's rather than drop it.
      log.once(`message-type:${message.rawType}`, 'Unknown message type, read as ai', { executionId, type: message.rawType });
      return 'ai';
    default:
      return message.type satisfies never;
  }
}

/**
 * Compares an output answer with the view: first a `node` event for each task node the answer shows
 * further on than the view (the output lists them with their status, service.md §4.2; it is read after
 * the status, so it may be the fresher of the two, as for a branch that finished after its execution
 * failed, §3.3), then `message` events with exact deltas for each message whose
 * text is new, grew or was rewritten (service.md §4.4), then a `file` event for each file not seen before
 * (service.md §4.6) — held back while it has no `url`, until its url arrives (see `ExecutionView.heldFiles`).
 * A file listed again at a new `url` (a link signed anew on each read) is the same file: no second
 * event, and the view keeps its newest link.
 * A message or node missing from a later answer is kept: text once delivered is never taken back.
 */
export function diffOutput(view: ExecutionView, output: ExecutionOutput): ViewDiff {
  const log = new WarningLog(view.reported);
  const events: RunEvent[] = [];
  const { executionId } = view;

  const nodes = moveNodes(executionId, view.nodes, output.output, log, events);

  const messages = new Map(view.messages);
  for (const node of output.output) {
    for (const message of node.messages) {
      const key = messageKey(node.nodeId, message.messageId);
      const known: MessageView | undefined = messages.get(key);
      const change = messageChange(known?.message, message);
      if (change === undefined) continue;
      messages.set(key, { nodeId: node.nodeId, message });
      events.push({
        type: 'message',
        executionId,
        nodeId: node.nodeId,
        messageId: message.messageId,
        role: roleOf(message, log, executionId),
        ...change,
        content: message.content,
        reasoningContent: message.reasoningContent,
      });
    }
  }

  const files = [...view.files];
  const held = new Set(view.heldFiles);
  const index = new FileIndex(files);
  for (const file of output.files) {
    const place = index.find(file);
    const known = place === undefined ? undefined : files[place];
    if (place === undefined || known === undefined) {
      index.add(file, files.length);
      files.push(file);
      if (file.url === undefined) held.add(files.length - 1);
      else events.push({ type: 'file', executionId, file });
      continue;
    }
    const updated = withDetails(known, file);
    files[place] = updated;
    // A new link changes no key; a node or size now known does.
    if (updated.nodeId !== known.nodeId || updated.size !== known.size) index.add(updated, place);
    if (held.has(place) && updated.url !== undefined) {
      held.delete(place);
      events.push({ type: 'file', executionId, file: updated });
    }
  }

  return {
    view: { ...view, nodes, messages, files, heldFiles: held, outputNodes: mergeOutputNodes(view.outputNodes, output.output), reported: log.reported },
    events,
    warnings: log.warnings,
  };
}

/**
 * The task nodes as the latest answer shows them, with every node an earlier answer showed and this
 * one leaves out kept where it was: its delivered text belongs to the run's result.
 */
function mergeOutputNodes(known: readonly OutputNode[], latest: readonly OutputNode[]): readonly OutputNode[] {
  const byId = new Map(latest.map((node) => [node.nodeId, node]));
  const merged = known.map((node) => byId.get(node.nodeId) ?? node);
  const seen = new Set(known.map((node) => node.nodeId));
  return [...merged, ...latest.filter((node) => !seen.has(node.nodeId))];
}

/**
 * At the end, the `file` events of files still waiting for a `url`: what is known of them is all
 * there will be.
 */
export function announceHeldFiles(view: ExecutionView): ViewDiff {
  const events: RunEvent[] = [...view.heldFiles].sort((a, b) => a - b).flatMap((index) => {
    const file = view.files[index];
    return file === undefined ? [] : [{ type: 'file' as const, executionId: view.executionId, file }];
  });
  return { view: { ...view, heldFiles: NO_INDEXES }, events, warnings: [] };
}

/**
 * The `RunResult` of a terminal execution, built from the view so that it says exactly what the
 * events said: each node at its furthest status, each task node of the last output read with every
 * message delivered for it, every file delivered.
 */
export function runResultOf(view: ExecutionView, status: RunResult['status'], canvasId?: string): RunResult {
  const nodes = [...view.nodes.values()];
  // Grouped once, in first-seen order: a result of n nodes and messages costs O(n).
  const messages = new Map<string, OutputMessage[]>();
  for (const { nodeId, message } of view.messages.values()) {
    const ofNode = messages.get(nodeId);
    if (ofNode === undefined) messages.set(nodeId, [message]);
    else ofNode.push(message);
  }
  return {
    executionId: view.executionId,
    ...(canvasId === undefined ? {} : { canvasId }),
    status,
    endedBy: status,
    nodes,
    output: view.outputNodes.map((node) => ({
      ...node,
      messages: messages.get(node.nodeId) ?? [],
    })),
    files: [...view.files],
    failedNodes: nodes.filter((node) => node.status === 'failed'),
    runningNodes: nodes.filter((node) => node.status === 'executing' || node.status === 'waiting'),
  };
}

/**
 * The `RunResult` of an ended execution read apart from any run: one status answer and one output
 * answer, as a run's view would hold them after those two reads; `undefined` while the status says the
 * execution goes on.
 */
export function readResult(snapshot: ExecutionSnapshot, output: ExecutionOutput): RunResult | undefined {
  if (!isExecutionOver(snapshot.status)) return undefined;
  const { view } = diffOutput(diffStatus(initialView(snapshot.executionId), snapshot).view, output);
  return runResultOf(view, snapshot.status);
}

/** The two texts of a message (service.md §4.5: `reasoningContent` is usually empty). */
interface MessageText {
  readonly content: string;
  readonly reasoningContent: string;
}

/** What a message event says about a change of text. */
interface MessageChange {
  readonly delta: string;
  readonly reasoningDelta: string;
  readonly replaced: boolean;
}

/**
 * The change between two reads of a message, or `undefined` when there is nothing new to say.
 * service.md §4.4 names three cases: a new message (all of its text is new), grown content (the old
 * text is a prefix of the new: only the suffix is new), and rewritten content (anything else: the
 * whole new text, `replaced`). Both texts are judged together so one `replaced` flag covers the event.
 */
export function messageChange(previous: MessageText | undefined, next: MessageText): MessageChange | undefined {
  if (previous === undefined) {
    // service.md §4.5: an empty message says nothing yet; when it gains text it is reported as new.
    if (next.content === '' && next.reasoningContent === '') return undefined;
    return { delta: next.content, reasoningDelta: next.reasoningContent, replaced: false };
  }
  if (previous.content === next.content && previous.reasoningContent === next.reasoningContent) return undefined;
  if (next.content.startsWith(previous.content) && next.reasoningContent.startsWith(previous.reasoningContent)) {
    return {
      delta: next.content.slice(previous.content.length),
      reasoningDelta: next.reasoningContent.slice(previous.reasoningContent.length),
      replaced: false,
    };
  }
  return { delta: next.content, reasoningDelta: next.reasoningContent, replaced: true };
}
