/** The error answers of every route: the contract's `{error}`, and the validation step's `{errors}`. */

export const errorSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: { type: 'string', minLength: 1 },
    errors: {
      description:
        'On a request body that broke rules: every field’s failure, one entry a field (`error` is the first).',
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: { field: { type: 'string' }, message: { type: 'string' } },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const validationErrorsSchema = {
  type: 'object',
  required: ['errors'],
  properties: {
    errors: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: { field: { type: 'string' }, message: { type: 'string', minLength: 1 } },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;
