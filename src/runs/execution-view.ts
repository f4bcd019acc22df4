import type { ExecutionStatus, NodeExecution, OutputFile, OutputMessage, OutputNode } from '../domain/model.js';

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
  /** Odd readings already logged, so each is logged once. */
  readonly reported: ReadonlySet<string>;
}

/** The view before any poll; `status` is what the start answered, when there was one. */
export function initialView(executionId: string, status?: ExecutionStatus): ExecutionView {
  return {
    executionId,
    status,
    nodes: new Map(),
    messages: new Map(),
    outputNodes: [],
    files: [],
    heldFiles: new Set(),
    reported: new Set(),
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

/**
 * Finds which of the files seen so far a listed file is (see {@link sameFile}) with a few map look-ups
 * instead of a scan of them all: a reading of n files costs O(n), not O(n²). Each file is filed under
 * its node and size, and under a wildcard for each, so that a listing without a detail finds a file
 * that has it, and one with it finds a file that lacked it; the first file filed under a key keeps it.
 */
export class FileIndex {
  readonly #first = new Map<string, number>();

  constructor(files: readonly OutputFile[]) {
    files.forEach((file, index) => {
      this.add(file, index);
    });
  }

  /** Files `file`, at `index` in the list it indexes. */
  add(file: OutputFile, index: number): void {
    const node = file.nodeId ?? LACKING;
    const size = file.size === undefined ? LACKING : String(file.size);
    for (const key of [fileKey(file, node, size), fileKey(file, node, ANY), fileKey(file, ANY, size), fileKey(file, ANY, ANY)]) {
      if (!this.#first.has(key)) this.#first.set(key, index);
    }
  }

  /** The index in `files` (the list indexed) of the file `seen` is, if it was seen before. */
  find(files: readonly OutputFile[], seen: OutputFile): number | undefined {
    const nodes = seen.nodeId === undefined ? [ANY] : [seen.nodeId, LACKING];
    const sizes = seen.size === undefined ? [ANY] : [String(seen.size), LACKING];
    for (const node of nodes) {
      for (const size of sizes) {
        const index = this.#first.get(fileKey(seen, node, size));
        const known = index === undefined ? undefined : files[index];
        if (index !== undefined && known !== undefined && sameFile(known, seen)) return index;
      }
    }
    return undefined;
  }
}

/** `known` with every detail `seen` adds, and its newest `url`. */
export function withDetails(known: OutputFile, seen: OutputFile): OutputFile {
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
