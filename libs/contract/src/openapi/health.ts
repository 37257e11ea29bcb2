/** The operations of the `health` tag: liveness and readiness. */
import { ref, response } from './responses';

export const healthPaths = {
  '/healthz': {
    get: {
      operationId: 'health',
      summary: 'Check that the gateway process is up',
      tags: ['health'],
      security: [],
      responses: { 200: response('Up.', ref('Health')) },
    },
  },
  '/readyz': {
    get: {
      operationId: 'ready',
      summary: 'Check that every service and its dependencies answer',
      description: 'Every service, and their databases and storage, answers (200), or one does not (503).',
      tags: ['health'],
      security: [],
      responses: { 200: response('Ready.', ref('Readiness')), 503: response('Not ready.', ref('Readiness')) },
    },
  },
} as const;
