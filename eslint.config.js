// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Node built-ins may only be used outside the browser-safe core (DESIGN.md, "Rules of the house"). */
const CORE = ['src/index.ts', 'src/errors/**', 'src/http/**', 'src/runs/**', 'src/budget/**', 'src/pipeline/**'];

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
    files: CORE,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'The core runs in a browser: Node-only code belongs in src/node/.' },
            { group: ['**/node/**', '**/emulator/**', '**/cli/**'], message: 'The core never imports node/, emulator/ or cli/.' },
          ],
        },
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
              group: ['../errors/*', '../http/*', '../runs/*', '../budget/*', '../pipeline/*', '../node/*', '../cli/*', '../index.js', '../../*', '!../../emulator/**'],
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
