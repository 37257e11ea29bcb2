/** Liveness and readiness. */

export const healthSchema = {
  type: 'object',
  required: ['status'],
  properties: { status: { const: 'ok' } },
  additionalProperties: false,
} as const;

export const readinessSchema = {
  type: 'object',
  properties: {
    status: { const: 'ready' },
    error: { type: 'string' },
    services: { type: 'object', additionalProperties: { type: 'boolean' } },
    checks: { type: 'object', additionalProperties: { enum: ['ok', 'failing'] } },
    notices: {
      type: 'object',
      description:
        'What an operator should know while the gateway still serves: `tokens`, when the revocation feed has been away long enough to matter.',
      additionalProperties: { type: 'string' },
    },
  },
  additionalProperties: false,
} as const;
