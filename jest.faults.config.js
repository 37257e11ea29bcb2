// `npm run test:faults`: the fault tests (bench/faults), one file at a time, each breaking
// processes it started itself. The test kit's global setup provides the shared servers.
const base = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  globalSetup: base.globalSetup,
  globalTeardown: base.globalTeardown,
  // One at a time: a fault test's timings must not share two cores with another's load.
  maxWorkers: 1,
  testTimeout: 240_000,
  projects: [
    {
      displayName: 'faults',
      rootDir: `${__dirname}/bench`,
      roots: ['<rootDir>/faults'],
      testMatch: ['**/*.test.ts'],
      testEnvironment: 'node',
      transform: base.projects[0].transform,
    },
  ],
};
