// One jest project per workspace, and the fault tests (tests/faults) as the project `faults`. The
// real MongoDB-protocol and S3 servers are started once for the whole run by the test kit's global
// setup (or taken from MONGO_URL / S3_ENDPOINT).
//
// The fault tests run apart, selected by name: `npm run test:faults` is
// `jest --selectProjects faults --maxWorkers=1` (one file at a time: a fault test's timings must not
// share two cores with another's load), and `npm test` is `jest --ignoreProjects faults`.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const WORKSPACES = [
  'libs/contract',
  'libs/config',
  'libs/auth',
  'libs/koa',
  'libs/lifecycle',
  'libs/log',
  'libs/mongo',
  'libs/outbox',
  'libs/storage',
  'dev/devstack',
  'services/identity',
  'services/posts',
  'services/notes',
  'services/files',
  'gateway',
  'bench',
  'clients/js',
];

const swc = [
  '@swc/jest',
  { jsc: { parser: { syntax: 'typescript' }, target: 'es2023' }, module: { type: 'commonjs' } },
];

/** @type {import('jest').Config} */
module.exports = {
  globalSetup: './dev/testkit/dist/src/global-setup.js',
  globalTeardown: './dev/testkit/dist/src/global-teardown.js',
  maxWorkers: 2,
  // A global option: jest ignores it inside a project. Real servers and processes need more than 5 s.
  testTimeout: 30_000,
  projects: [
    // A workspace without tests yet is skipped rather than breaking the run.
    ...WORKSPACES.filter((dir) => existsSync(join(__dirname, dir, 'test'))).map((dir) => ({
      displayName: dir,
      rootDir: join(__dirname, dir),
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.test.ts'],
      testEnvironment: 'node',
      transform: { '^.+\\.ts$': swc },
      // The client library is ESM: its relative imports name the .js its .ts compiles to.
      ...(dir === 'clients/js' ? { moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' } } : {}),
    })),
    {
      displayName: 'faults',
      rootDir: join(__dirname, 'tests'),
      roots: ['<rootDir>/faults'],
      testMatch: ['**/*.test.ts'],
      testEnvironment: 'node',
      transform: { '^.+\\.ts$': swc },
      // Each test breaks processes it started itself, which takes minutes, not the 30 s above.
      setupFilesAfterEnv: ['<rootDir>/faults/test-timeout.ts'],
    },
  ],
};
