// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layers of the browser-safe core, bottom first (DESIGN.md, "Layers"): a layer imports only the
 * layers below it, and `domain` nothing at all. Data flows runs → budget → http → fetch.
 */
const CORE_LAYERS = ['domain', 'errors', 'http', 'budget', 'runs', 'pipeline'];

/** Node built-ins and the Node-only folders stay out of the core (DESIGN.md, "Rules of the house"). */
const BROWSER_SAFE = [
  { group: ['node:*'], message: 'The core runs in a browser: Node-only code belongs in src/node/.' },
  { group: ['**/node/**', '**/emulator/**', '**/cli/**', '**/redis/**', '**/bullmq/**'], message: 'The core never imports node/, emulator/, cli/, redis/ or bullmq/.' },
];

/** The relay sits above the client, beside the Node-only folders: the core never reaches it. */
const NOT_THE_RELAY = { group: ['**/relay/**'], message: 'The core never imports relay/: the relay is built on the client, not the other way round.' };

/** React's hooks sit on the core, which depends on no framework. */
const NOT_REACT = { group: ['react', 'react/*', 'react-dom', 'react-dom/*', '**/react/**'], message: 'The core depends on no UI framework: React hooks belong in src/react/.' };

/** OpenTelemetry is an optional peer: only flowstream/otel imports it; the core offers a plain hook. */
const NOT_OTEL = { group: ['@opentelemetry/*', '**/otel/**'], message: 'The core imports no OpenTelemetry: it reports to the telemetry hook, which src/otel/ fills.' };

/** The import rule of one core layer: browser-safe, and nothing from a layer above it or from the root. */
function layerRule(layer) {
  const above = CORE_LAYERS.slice(CORE_LAYERS.indexOf(layer) + 1);
  return {
    files: [`src/${layer}/**`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...BROWSER_SAFE,
            NOT_THE_RELAY,
            NOT_REACT,
            NOT_OTEL,
            {
              group: [...above.map((name) => `**/${name}/**`), '../client.js', '../index.js', '../../client.js', '../../index.js'],
              message: `Layers import only the layers below them (DESIGN.md): ${layer}/ may use ${CORE_LAYERS.slice(0, CORE_LAYERS.indexOf(layer)).join(', ') || 'nothing of the client'}.`,
            },
          ],
        },
      ],
    },
  };
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'examples/web/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['src/index.ts', 'src/client.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [...BROWSER_SAFE, NOT_THE_RELAY, NOT_REACT, NOT_OTEL] }] },
  },
  ...CORE_LAYERS.map(layerRule),
  {
    // React's hooks run in the browser on the core alone: no Node built-ins, no relay (a server part), no root barrel.
    files: ['src/react/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [...BROWSER_SAFE, NOT_THE_RELAY, { group: ['../index.js'], message: 'flowstream/react imports the core file by file: the root barrel would pull in every export.' }] },
      ],
    },
  },
  {
    // The relay answers Request with Response on any server runtime (Node, Deno, Bun, workers): no Node built-ins.
    files: ['src/relay/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: BROWSER_SAFE }] },
  },
  {
    // flowstream/otel sits on the client and runs wherever OpenTelemetry's API does, browsers included.
    files: ['src/otel/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [...BROWSER_SAFE, NOT_THE_RELAY, NOT_REACT] }] },
  },
  {
    // The MCP SDK is for `flowstream mcp` alone: the command's bundle hoists a module's static imports
    // to its top, so a value import would load the SDK for every command. Types only; values by import().
    files: ['src/cli/**', 'src/mcp/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@modelcontextprotocol/*'], allowTypeImports: true, message: 'Load the MCP SDK with `await import()` where it is used: only `flowstream mcp` may load it.' }] },
      ],
    },
  },
  {
    files: ['src/emulator/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../domain/*', '../errors/*', '../http/*', '../runs/*', '../budget/*', '../pipeline/*', '../node/*', '../cli/*', '../index.js', '../../*', '!../../emulator/**'],
              message: 'The emulator imports nothing from the client (DESIGN.md): src/emulator is a separate world.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**', 'bench/**', 'examples/**'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-floating-promises': 'off',
    },
  },
  {
    files: ['eslint.config.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Plain Node scripts that run before anything is built (npm's pre-steps): no type information.
    files: ['scripts/**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: { process: 'readonly', console: 'readonly' } },
  },
);
