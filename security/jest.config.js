// The battery starts one whole platform (child processes) and attacks it in order: one worker.
module.exports = require('../jest.preset.js')(__dirname, {
  maxWorkers: 1,
  testTimeout: 180_000,
});
