module.exports = require('../jest.preset.js')(__dirname, {
  globalSetup: '<rootDir>/jest.global-setup.js',
});
