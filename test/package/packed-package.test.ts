import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator } from '../../src/emulator/index.js';
import { scrubbedEnv, startProcess } from '../cli/support/child-process.js';

// The package as a user gets it: `npm pack` (its `prepack` builds), the tarball installed into a new
// project, imported by its public names, type-checked under both module resolutions users choose, and
// one workflow run on the packed emulator. What the repository's own tests import from `src/` cannot
// show: a missing file in `files`, a broken `exports` map, declarations that do not resolve. It is packed
// from a copy of the sources, so its build never rewrites the `dist/` that other tests run meanwhile.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const run = promisify(execFile);

/** A user's program: every public entry point, and one run of a sample workflow on the emulator. */
const PROGRAM = `import { tap } from 'rxjs';
import { createClient, runResult, isFlowstreamError, connectRun, isRelayError, type RunEvent } from 'flowstream';
import { createEmulator } from 'flowstream/emulator';
import { fromPath } from 'flowstream/node';
import { createRunRelay, createRunTokens, toNodeListener } from 'flowstream/relay';
import { useRun, useStartRun, type StartRunView } from 'flowstream/react';
import { createTelemetry } from 'flowstream/otel';

const emulator = await createEmulator({ speed: 50 });
try {
  // The global (no-op) OpenTelemetry providers: the hook works with nothing registered.
  const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.url, telemetry: createTelemetry() });
  const seen: RunEvent['type'][] = [];
  const result = await runResult(client.run('c-sample-parallel').pipe(tap((event: RunEvent) => seen.push(event.type))));
  const tokens = createRunTokens({ secret: 'a secret of thirty-two bytes or more' });
  const relay = createRunRelay({ client, tokens });
  const token = await tokens.sign({ executionId: result.executionId, scope: ['read'], ttlMs: 60_000 });
  const relayed = await relay.fetch(new Request(\`http://localhost/executions/\${result.executionId}/events?token=\${token}\`));
  const text = await relayed.text();
  relay.close();
  const relayOutcome = { status: relayed.status, finished: text.includes('event: finished'), connectRun: typeof connectRun, listener: typeof toNodeListener(relay), guard: isRelayError(new Error('x')) };
  const started: StartRunView['status'] = 'idle';
  const react = { useRun: typeof useRun, useStartRun: typeof useStartRun, started };
  console.log(JSON.stringify({ status: result.status, executionId: result.executionId, first: seen[0], last: seen.at(-1), fromPath: typeof fromPath, guard: isFlowstreamError(new Error('x')), relay: relayOutcome, react, otel: typeof createTelemetry }));
} finally {
  await emulator.close();
}
`;

/** The two ways a TypeScript user resolves packages: Node's own (with `exports`), and a bundler's. */
const TSCONFIGS = {
  node16: { module: 'node16', moduleResolution: 'node16' },
  bundler: { module: 'esnext', moduleResolution: 'bundler' },
} as const;

let project = '';

async function npm(args: readonly string[], cwd: string): Promise<string> {
  const { stdout } = await run('npm', args, { cwd, env: scrubbedEnv(), maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

function tsconfig(resolution: (typeof TSCONFIGS)[keyof typeof TSCONFIGS], outDir?: string): string {
  return JSON.stringify({
    compilerOptions: {
      target: 'es2022',
      ...resolution,
      strict: true,
      skipLibCheck: false,
      types: ['node'],
      typeRoots: [join(ROOT, 'node_modules', '@types')],
      ...(outDir === undefined ? { noEmit: true } : { outDir }),
    },
    files: ['main.ts'],
  });
}

describe('the packed package, installed into a new project', () => {
  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'flowstream-packed-'));
    const packed = join(project, 'tarball');
    const source = join(project, 'source');
    await mkdir(packed);
    await mkdir(source);
    const entries = ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts', 'src', 'README.md', 'CHANGELOG.md', 'LICENSE'];
    await Promise.all(entries.filter((entry) => existsSync(join(ROOT, entry))).map((entry) => cp(join(ROOT, entry), join(source, entry), { recursive: true })));
    await symlink(join(ROOT, 'node_modules'), join(source, 'node_modules'), 'dir');
    await npm(['pack', '--silent', '--pack-destination', packed], source);
    const [tarball] = await readdir(packed);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'user-project', private: true, type: 'module', dependencies: { flowstream: `file:${join(packed, tarball!)}` } }));
    await npm(['install', '--silent', '--no-audit', '--no-fund', '--prefer-offline'], project);
    // React is an optional peer: an app using flowstream/react has it installed.
    await symlink(join(ROOT, 'node_modules', 'react'), join(project, 'node_modules', 'react'), 'dir');
    // So is OpenTelemetry's API: an app using flowstream/otel has it installed.
    await mkdir(join(project, 'node_modules', '@opentelemetry'), { recursive: true });
    await symlink(join(ROOT, 'node_modules', '@opentelemetry', 'api'), join(project, 'node_modules', '@opentelemetry', 'api'), 'dir');
    await writeFile(join(project, 'main.ts'), PROGRAM);
  }, 300_000);

  afterAll(async () => {
    if (project !== '') await rm(project, { recursive: true, force: true });
  });

  // The two checks at once: each is a tsc of its own (a core each), and neither writes what the other reads.
  it.concurrent.for(Object.keys(TSCONFIGS) as (keyof typeof TSCONFIGS)[])('type-checks a program importing flowstream, flowstream/emulator, flowstream/node, flowstream/relay, flowstream/react and flowstream/otel with moduleResolution %s', { timeout: 300_000 }, async (name, { expect }) => {
    await writeFile(join(project, `tsconfig.${name}.json`), tsconfig(TSCONFIGS[name]));
    await expect(run(process.execPath, [TSC, '-p', `tsconfig.${name}.json`], { cwd: project })).resolves.toBeDefined();
  });

  it('ships its licence, and source maps whose sources it ships too', async () => {
    const installed = join(project, 'node_modules', 'flowstream');
    expect(existsSync(join(installed, 'LICENSE'))).toBe(true);
    const maps = (await readdir(join(installed, 'dist'), { recursive: true })).filter((file) => file.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(10);
    for (const map of maps) {
      const path = join(installed, 'dist', map);
      const { sources } = JSON.parse(await readFile(path, 'utf8')) as { sources: string[] };
      for (const source of sources) expect(existsSync(resolve(dirname(path), source)), `${map} → ${source}`).toBe(true);
    }
  });

  it('takes rxjs as a peer, so an app and flowstream share one copy (Observables from both interoperate), and React and OpenTelemetry as optional ones', async () => {
    const manifest = JSON.parse(await readFile(join(project, 'node_modules', 'flowstream', 'package.json'), 'utf8')) as { peerDependencies?: Record<string, string>; peerDependenciesMeta?: Record<string, { optional?: boolean }>; dependencies?: Record<string, string> };
    expect(manifest.peerDependencies).toHaveProperty('rxjs');
    expect(manifest.peerDependencies).toHaveProperty('react');
    expect(manifest.peerDependenciesMeta?.['react']).toEqual({ optional: true });
    expect(manifest.dependencies).not.toHaveProperty('react');
    expect(manifest.peerDependenciesMeta?.['@opentelemetry/api']).toEqual({ optional: true });
    expect(manifest.dependencies).not.toHaveProperty('@opentelemetry/api');
    expect(manifest.dependencies).not.toHaveProperty('rxjs');
    expect(existsSync(join(project, 'node_modules', 'flowstream', 'node_modules', 'rxjs'))).toBe(false);
  });

  it('runs one workflow to its end on the packed emulator', async () => {
    await writeFile(join(project, 'tsconfig.emit.json'), tsconfig(TSCONFIGS.node16, 'out'));
    // Its types are the type-checks' above: here it is only compiled to JavaScript, to be run.
    await run(process.execPath, [TSC, '-p', 'tsconfig.emit.json', '--noCheck'], { cwd: project });
    const { stdout } = await run(process.execPath, [join(project, 'out', 'main.js')], { cwd: project, env: scrubbedEnv() });
    expect(JSON.parse(stdout)).toEqual({ status: 'finish', executionId: expect.stringMatching(/^we-/) as unknown, first: 'started', last: 'finished', fromPath: 'function', guard: false, relay: { status: 200, finished: true, connectRun: 'function', listener: 'function', guard: false }, react: { useRun: 'function', useStartRun: 'function', started: 'idle' }, otel: 'function' });
  }, 60_000);
  it('installs only what the library uses: the command\'s own packages are bundled into it, not dependencies', async () => {
    const manifest = JSON.parse(await readFile(join(project, 'node_modules', 'flowstream', 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual(['@modelcontextprotocol/sdk', 'ky', 'p-retry', 'zod']);
    for (const name of ['commander', 'log-update', 'cli-spinners', 'get-east-asian-width']) expect(existsSync(join(project, 'node_modules', name)), name).toBe(false);
    // The MCP SDK is for `flowstream mcp` alone: the bundled command imports it only where that command runs.
    const command = await readFile(join(project, 'node_modules', 'flowstream', 'dist', 'cli', 'main.js'), 'utf8');
    expect(command).not.toMatch(/^import\b[^;]*["']@modelcontextprotocol\//mu);
    expect(command).toMatch(/\bimport\(["']@modelcontextprotocol\/sdk\/server\/mcp\.js["']\)/u);
  });

  it('runs the installed flowstream command: its version, one workflow on an emulator, and the MCP server', async () => {
    const bin = join(project, 'node_modules', '.bin', 'flowstream');
    const version = await run(bin, ['--version'], { cwd: project, env: scrubbedEnv() });
    const { version: expected } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(version.stdout.trim()).toBe(expected);
    const emulator = await createEmulator({ speed: 50, rateLimit: false });
    try {
      const env = scrubbedEnv({ FLOWSTREAM_API_KEY: emulator.apiKey, FLOWSTREAM_BASE_URL: emulator.url });
      const { stdout } = await run(bin, ['run', 'c-sample-linear', '--quiet'], { cwd: project, env });
      expect(stdout).toMatch(/^✔ Run finished in /mu);
      // `flowstream mcp` loads the SDK from the installed dependencies, lists its tools, and stops at the end of its stdin (here at once).
      const mcp = startProcess(bin, ['mcp', '--workflow', 'c-sample-linear'], { cwd: project, env });
      expect(await mcp.exited()).toBe(0);
      expect(mcp.stdout()).toBe('');
      expect(mcp.stderr()).toContain('tools: search_workflows, get_workflow, run_workflow, research_brief_linear_chain (c-sample-linear)');
    } finally {
      await emulator.close();
    }
  }, 60_000);
});
