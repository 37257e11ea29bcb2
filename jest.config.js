// One jest project per workspace, the fault tests (tests/faults) as the project `faults`, the
// Compose deployment's tests (tests/compose) as the project `compose`, and the Swarm deployment's
// (tests/swarm) as `swarm`. The real MongoDB-protocol and S3 servers are started once for the whole
// run by the test kit's global setup (or taken from MONGO_URL / S3_ENDPOINT), for every project but
// `compose` and `swarm`, which run against the deployment that scripts/compose-e2e.sh or
// scripts/swarm-e2e.sh prepares.
//
// The fault tests and the deployment tests run apart, selected by name, one file at a time:
// `npm run test:faults` is `jest --selectProjects faults --maxWorkers=1` (a fault test's timings
// must not share two cores with another's load), scripts/compose-e2e.sh runs
// `jest --selectProjects compose --maxWorkers=1` (scripts/swarm-e2e.sh the same with `swarm`),
// and `npm test` is `jest --ignoreProjects faults compose swarm`.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const WORKSPACES = [
  'libs/contract',
  'libs/config',
  'libs/auth',
  'libs/event-bus',
  'libs/koa',
  'libs/lifecycle',
  'libs/log',
  'libs/mongo',
  'libs/outbox',
  'libs/search',
  'libs/service',
  'libs/storage',
  'dev/devstack',
  'services/identity',
  'services/posts',
  'services/notes',
  'services/files',
  'services/realtime',
  'gateway',
  'server',
  'bench',
  'clients/js',
];

const swc = [
  '@swc/jest',
  { jsc: { parser: { syntax: 'typescript' }, target: 'es2023' }, module: { type: 'commonjs' } },
];

// The OpenID Connect relying party (services/identity, openid-client) and the two packages it
// stands on are ESM only. The built services load them with Node's require(esm); under jest, whose
// module system is CommonJS, they are compiled like our own files, and they alone of node_modules.
const ESM_ONLY = ['openid-client', 'oauth4webapi', 'jose'];
const esmOnly = {
  transform: { '^.+\\.ts$': swc, [`/node_modules/(${ESM_ONLY.join('|')})/.+\\.js$`]: swc },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
};

// A project's global setup runs once per run for all the projects that name the same file, and only
// when one of them has tests to run: the compose and swarm projects name none, so they alone start no server.
const testServers = {
  globalSetup: join(__dirname, 'dev/testkit/dist/src/global-setup.js'),
  globalTeardown: join(__dirname, 'dev/testkit/dist/src/global-teardown.js'),
};

/** @type {import('jest').Config} */
module.exports = {
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
      ...esmOnly,
      ...testServers,
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
      ...testServers,
      // Each test breaks processes it started itself, which takes minutes, not the 30 s above.
      setupFilesAfterEnv: ['<rootDir>/faults/test-timeout.ts'],
    },
    {
      displayName: 'compose',
      rootDir: join(__dirname, 'tests'),
      roots: ['<rootDir>/compose'],
      testMatch: ['**/*.test.ts'],
      testEnvironment: 'node',
      transform: { '^.+\\.ts$': swc },
      // Its steps build images and roll deployments: minutes each.
      setupFilesAfterEnv: ['<rootDir>/compose/test-timeout.ts'],
    },
    {
      displayName: 'swarm',
      rootDir: join(__dirname, 'tests'),
      roots: ['<rootDir>/swarm'],
      testMatch: ['**/*.test.ts'],
      testEnvironment: 'node',
      transform: { '^.+\\.ts$': swc },
      // Its steps roll a stack on a single-node swarm: minutes each, like the Compose tests'.
      setupFilesAfterEnv: ['<rootDir>/compose/test-timeout.ts'],
    },
  ],
};
