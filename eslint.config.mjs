// Lint for the extension, its tests and benchmarks: typescript-eslint's recommended rules plus
// the type-aware ones that catch real bugs cheaply here (floating and misused promises). Format
// is Prettier's job (.prettierrc.json); `npm run lint` runs both checks, and `npm test` runs it.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import localRules from './scripts/eslint-import-order.mjs';

export default tseslint.config(
  { ignores: ['node_modules/', 'out/', '.out-*/', 'dist/', 'test-output/', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { local: localRules },
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's describe/it return promises the runner itself awaits.
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] }] },
      ],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      eqeqeq: ['error', 'always'],
      // One import statement per module (a type-only one may stand beside it), and the imports in
      // groups: node built-ins, packages, then relative (scripts/eslint-import-order.mjs).
      'no-duplicate-imports': ['error', { allowSeparateTypeImports: true }],
      'local/import-order': 'error',
      'no-console': 'off',
    },
  },
);
