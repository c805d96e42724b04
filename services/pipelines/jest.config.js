module.exports = require('../../jest.preset.js')(__dirname, {
  globalSetup: '<rootDir>/jest.global-setup.js',
  // The integration tests mostly wait on worker processes they spawn, so run files side by side
  // even on a two-core machine.
  maxWorkers: 3,
});
