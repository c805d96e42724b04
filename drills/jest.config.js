// Drills start whole platforms (child processes, their own redis-server): one at a time.
module.exports = require('../jest.preset.js')(__dirname, {
  maxWorkers: 1,
  testTimeout: 180_000,
});
