// Shared jest settings: TypeScript through swc (no type-check at test time; `typecheck` does that).
// Two projects per package: `unit` (`*.test.ts`) needs no server and no global setup, so
// `jest --selectProjects unit` runs with PostgreSQL and Redis down; `integration` (`*.int.test.ts`)
// gets the package's globalSetup/globalTeardown (a migrated database, a started platform).
const base = (dir, moduleNameMapper) => ({
  rootDir: dir,
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] },
  // Generated Prisma code and NodeNext sources import './x.js' for './x.ts'.
  moduleNameMapper: { ...moduleNameMapper, '^(\\.{1,2}/.*)\\.js$': '$1' },
  moduleFileExtensions: ['ts', 'js', 'json'],
});

/**
 * @param {string} dir the package folder
 * @param {import('jest').Config & { unitTestMatch?: string[] }} [options] run-wide options (testTimeout,
 *   maxWorkers, ...); its globalSetup and globalTeardown belong to the integration project alone, and
 *   unitTestMatch adds unit tests outside src/ (the gateway's browser pages); moduleNameMapper entries
 *   come before the './x.js' rule.
 * @returns {import('jest').Config}
 */
module.exports = (dir, { globalSetup, globalTeardown, unitTestMatch = [], moduleNameMapper = {}, ...options } = {}) => ({
  // Longer than the waits inside a test (@platform/testing's waitFor: a minute by default), so a
  // stalled wait fails with its own message, not as a jest timeout.
  testTimeout: 120_000,
  ...options,
  projects: [
    {
      ...base(dir, moduleNameMapper),
      displayName: 'unit',
      testMatch: ['<rootDir>/src/**/*.test.ts', ...unitTestMatch],
      testPathIgnorePatterns: ['/node_modules/', '\\.int\\.test\\.ts$'],
    },
    {
      ...base(dir, moduleNameMapper),
      displayName: 'integration',
      testMatch: ['<rootDir>/src/**/*.int.test.ts'],
      ...(globalSetup ? { globalSetup } : {}),
      ...(globalTeardown ? { globalTeardown } : {}),
    },
  ],
});
