module.exports = require('../jest.preset.js')(__dirname, {
  globalSetup: '<rootDir>/jest.global-setup.js',
  // The API reference page's views and the console's formatting (browser code, no DOM in them) are tested beside their source.
  unitTestMatch: ['<rootDir>/docs/src/**/*.test.ts', '<rootDir>/console/src/**/*.test.ts'],
  // The page imports the client's browser build served beside it; under jest that is the package's Node build, the same code.
  moduleNameMapper: { '^\\./client/index\\.js$': '@platform/client' },
});
