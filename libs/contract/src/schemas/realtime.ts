/** Live updates: what their routes answer. */

/** A ticket that names its caller on one stream (`?ticket=`) and its reconnects, for EventSource. */
export const realtimeTicketSchema = {
  type: 'object',
  required: ['ticket', 'expiresIn'],
  properties: { ticket: { type: 'string', minLength: 1 }, expiresIn: { type: 'integer', minimum: 1 } },
  additionalProperties: false,
} as const;
