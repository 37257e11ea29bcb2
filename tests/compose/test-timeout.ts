/**
 * The Compose tests' time bound, set for their jest project alone (jest reads `testTimeout` only as
 * a global option). It bounds each step too (a `beforeAll`), and is meant never to be reached: on
 * two loaded cores building the images alone has taken more than ten minutes. A hook that times
 * out leaves its work running under the next steps, so the bound that stops a hung run is the one
 * around the whole script (.ci/run gives scripts/compose-e2e.sh 25 minutes).
 */
import { jest } from '@jest/globals';

jest.setTimeout(45 * 60_000);
