// Shared jest settings: TypeScript through swc (no type-check at test time; `typecheck` does that).
/** @type {(dir: string) => import('jest').Config} */
module.exports = (dir) => ({
  rootDir: dir,
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] },
  testMatch: ['<rootDir>/src/**/*.test.ts'],
  // Generated Prisma code and NodeNext sources import './x.js' for './x.ts'.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testTimeout: 30000,
});
