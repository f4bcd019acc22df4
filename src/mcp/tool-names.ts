/**
 * The longest tool name: the strictest hosts take `^[a-zA-Z0-9_-]{1,64}$`, and the Model Context
 * Protocol's own rule (1–128 of `A-Za-z0-9_-.`) holds it too.
 */
export const MAX_TOOL_NAME_LENGTH = 64;

/** The tools every `flowstream mcp` server has; a workflow's tool never takes one of these names. */
export const GENERAL_TOOL_NAMES = ['search_workflows', 'get_workflow', 'run_workflow'] as const;

const FALLBACK = 'workflow';

/**
 * A name every host takes, made of `wanted`: accents dropped, every run of other characters one `_`,
 * no `_` at either end, at most 64 characters; `workflow` when nothing is left.
 */
export function sanitiseToolName(wanted: string): string {
  const cleaned = wanted
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[^A-Za-z0-9_-]+/gu, '_')
    .replace(/^[_-]+|[_-]+$/gu, '')
    .slice(0, MAX_TOOL_NAME_LENGTH)
    .replace(/[_-]+$/u, '');
  return cleaned === '' ? FALLBACK : cleaned;
}

/** `name` with the suffix `_n`, cut to fit the length limit. */
function numbered(name: string, n: number): string {
  const suffix = `_${n}`;
  return `${name.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length)}${suffix}`;
}

/**
 * Sanitised tool names for `wanted`, in order, unique among themselves and apart from `taken`, case
 * aside (a host may fold case): a name already given gets `_2`, `_3`, … .
 *
 * @example
 * ```ts
 * uniqueToolNames(['Summarise PDF', 'summarise-pdf', 'run_workflow'], GENERAL_TOOL_NAMES);
 * // ['Summarise_PDF', 'summarise-pdf', 'run_workflow_2']
 * ```
 */
export function uniqueToolNames(wanted: readonly string[], taken: readonly string[] = []): string[] {
  const used = new Set(taken.map((name) => name.toLowerCase()));
  return wanted.map((raw) => {
    const base = sanitiseToolName(raw);
    let name = base;
    for (let n = 2; used.has(name.toLowerCase()); n += 1) name = numbered(base, n);
    used.add(name.toLowerCase());
    return name;
  });
}
