/**
 * Request bodies once their schema (`@cs/contract`) has passed them: the rules that depend on
 * configuration (the allowed media types, the size limit), then what the domain takes.
 */
import { fieldError } from '@cs/errors';
import { messages } from '../messages';

export interface UploadRequest {
  contentType: string;
  filename: string;
  /** The exact length, signed into the link; absent in the contract's request (see uploads.ts). */
  size?: number;
}

export interface UploadRules {
  allowedTypes: readonly string[];
  maxBytes: number;
}

/** `{contentType, filename, size?}` (uploadRequestSchema) → a request the domain can trust, or a 400. */
export function toUploadRequest(body: Record<string, unknown>, { allowedTypes, maxBytes }: UploadRules): UploadRequest {
  const { filename, size } = body as { filename: string; size?: number };
  const contentType = (body.contentType as string).trim().toLowerCase();
  if (!allowedTypes.includes(contentType)) throw fieldError('contentType', messages.typeNotAllowed(allowedTypes));
  // Optional, as in the contract: when given it is signed into the link, so storage takes no other length.
  if (size === undefined) return { contentType, filename };
  if (size > maxBytes) throw fieldError('size', messages.badSize);
  return { contentType, filename, size };
}

/** A multipart upload's request (multipartRequestSchema, which requires `size`: the parts are cut from it). */
export function toMultipartRequest(body: Record<string, unknown>, rules: UploadRules): Required<UploadRequest> {
  return toUploadRequest(body, rules) as Required<UploadRequest>;
}
