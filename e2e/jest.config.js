// The platform starts once (globalSetup) from the built dist/ of each deployable and stops in
// globalTeardown, which jest runs after failed tests too. Every wait in the tests is bounded
// (generously, for a loaded machine), so the suite always ends.
module.exports = require('../jest.preset.js')(__dirname, {
  globalSetup: '<rootDir>/src/global-setup.ts',
  globalTeardown: '<rootDir>/src/global-teardown.ts',
  testTimeout: 180_000,
  maxWorkers: 1,
});
