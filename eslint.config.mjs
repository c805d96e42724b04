// One ESLint config for the whole tree: every package's `lint` script runs `eslint .` from its folder.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/src/generated/**',
      '**/coverage/**',
      'bench/results/**',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
      '**/prisma.config.ts',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // Each file is checked with the tsconfig.json nearest to it (apps/console/console and apps/console/docs
        // have their own, for the browser).
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Deliberate: U+0000 is refused where input is parsed (PostgreSQL cannot hold it), and URLs are
      // matched the way WHATWG parses them, C0 controls included.
      'no-control-regex': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // The API reference's views are pure (document in, view tree out, unit-tested without a DOM):
    // only dom.ts builds nodes and only docs.ts, the page, reads the location or fetches.
    files: ['apps/console/docs/src/**/*.ts'],
    ignores: ['apps/console/docs/src/dom.ts', 'apps/console/docs/src/docs.ts'],
    rules: { 'no-restricted-globals': ['error', 'document', 'window', 'location', 'fetch', 'history', 'navigator', 'localStorage', 'sessionStorage'] },
  },
  {
    // Tests and the bench read answers through supertest and fetch, whose bodies are `any` by design:
    // each test asserts the fields it names, and the answers' schemas are checked by the contract tests.
    files: ['**/*.test.ts', '**/src/test/**', 'e2e/**', 'drills/**', 'security/**', 'packages/testing/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Fakes implement the async interfaces they stand in for, with nothing to wait for.
      '@typescript-eslint/require-await': 'off',
      // `expect(fake.method).toHaveBeenCalled()` passes a method without calling it.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
