/**
 * The fault tests' time bound, set for their jest project alone (jest reads `testTimeout` only as a
 * global option): a test that kills, pauses and restarts servers under traffic takes minutes.
 */
import { jest } from '@jest/globals';

jest.setTimeout(240_000);
