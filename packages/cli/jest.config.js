module.exports = require('../../jest.preset.js')(__dirname, {
  globalSetup: '<rootDir>/jest.global-setup.js',
  // The gateway's modules run from its TypeScript source here, as in its own tests: its built Prisma
  // client loads its engine with a dynamic import(), which jest's CommonJS runtime refuses.
  moduleNameMapper: {
    '^@platform/gateway/testing$': '<rootDir>/../../gateway/src/test/gateway.ts',
    '^@platform/gateway/(config|database|keys\\.service|keys\\.store|migrate)$': '<rootDir>/../../gateway/src/$1.ts',
  },
});
