import { expect } from '@jest/globals';

/**
 * The answer to a body that broke a rule of a route whose contract answers `{error}`: that
 * message, with every field's entry beside it (`errors`, the first entry being the message's).
 */
export function refusal(error: string) {
  return { error, errors: expect.arrayContaining([expect.objectContaining({ message: error })]) };
}
