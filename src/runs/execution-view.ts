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

const nodeOf = (file: OutputFile): string => file.nodeId ?? LACKING;
const sizeOf = (file: OutputFile): string => (file.size === undefined ? LACKING : String(file.size));

/**
 * Finds which of the files seen so far a listed file is (see {@link sameFile}) with a few map look-ups
 * instead of a scan of them all: a reading of n files costs O(n), not O(n²). Each file is filed under
 * its name, type, node and size (a missing detail is a value of its own), so a listing with every
 * detail finds the file that has them, or one that lacked some. A listing without a node or a size
 * needs wildcards: those keys are filed only once such a listing comes. The first file filed under a
 * key keeps it.
 */
export class FileIndex {
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
    const node = nodeOf(file);
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
      for (const key of partialKeys(file, nodeOf(file), sizeOf(file))) fileOnce(partial, key, place);
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
