// The platform starts once (globalSetup) from the built dist/ of each deployable and stops in
// globalTeardown, which jest runs after failed tests too. Every wait in the tests is bounded, so
// the suite ends well within 90 s.
module.exports = require('../jest.preset.js')(__dirname, {
  globalSetup: '<rootDir>/src/global-setup.ts',
  globalTeardown: '<rootDir>/src/global-teardown.ts',
  testTimeout: 45_000,
  maxWorkers: 1,
});
