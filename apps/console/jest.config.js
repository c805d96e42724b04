module.exports = require('../../jest.preset.js')(__dirname, {
  // The pages' views and formatting (browser code, no DOM in them) are tested beside their source.
  unitTestMatch: ['<rootDir>/docs/src/**/*.test.ts', '<rootDir>/console/src/**/*.test.ts'],
  // The console imports the client's browser build served beside it; under jest that is the package's Node build, the same code.
  moduleNameMapper: { '^\\./client/index\\.js$': '@platform/client' },
});
