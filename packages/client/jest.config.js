// The integration tests drive the built platform (gateway, services, worker) started once by the
// globalSetup; unit tests need no server.
module.exports = require('../../jest.preset.js')(__dirname, {
  globalSetup: '<rootDir>/src/test/global-setup.ts',
  globalTeardown: '<rootDir>/src/test/global-teardown.ts',
  testTimeout: 180_000,
  maxWorkers: 1,
});
