/**
 * Turning what a client sent into what the domain accepts. Pure functions: no I/O, so every rule
 * of the contract's Limits table can be read (and tested) in one place.
 */
import { characterCount } from '@cs/contract';
import { HttpError } from '@cs/errors';
import { messages, POST_LIMITS, type PostStatus, STATUSES, TAG } from './schemas';

export interface ListQuery {
  page: number;
  limit: number;
  tag: string | undefined;
}

/** A positive integer as written in a query string, else undefined. */
function positiveInteger(raw: unknown, max: number): number | undefined {
  if (typeof raw !== 'string' || !/^\d+$/.test(raw)) return undefined;
  const n = Number(raw);
  return n >= 1 && n <= max ? n : undefined;
}

/** page and limit fall back to their defaults; limit is capped at 50; a bad tag is ignored. */
export function parseListQuery(query: Record<string, unknown>): ListQuery {
  const page = positiveInteger(query.page, POST_LIMITS.pageMax) ?? POST_LIMITS.pageDefault;
  const asked = positiveInteger(query.limit, Number.MAX_SAFE_INTEGER) ?? POST_LIMITS.limitDefault;
  const tag = typeof query.tag === 'string' && TAG.test(query.tag) ? query.tag.toLowerCase() : undefined;
  return { page, limit: Math.min(asked, POST_LIMITS.limitMax), tag };
}

export interface NewPost {
  title: string;
  body: string;
  tags: string[];
}

/** After the validation step: trims, and lowercases and deduplicates tags. */
export function toNewPost(body: Record<string, unknown>): NewPost {
  const tags = Array.isArray(body.tags) ? body.tags.map((t) => String(t).toLowerCase()) : [];
  return { title: String(body.title).trim(), body: String(body.body).trim(), tags: [...new Set(tags)] };
}

export interface PostChanges {
  title?: string;
  body?: string;
  status?: PostStatus;
}

function text(value: unknown, field: 'title' | 'body'): string {
  if (typeof value !== 'string') throw new HttpError(400, `${field} must be a string`);
  const trimmed = value.trim();
  // Counted as the create route's schema counts them, so both routes accept the same texts.
  const length = characterCount(trimmed);
  if (field === 'title' && length === 0) throw new HttpError(400, messages.titleRequired);
  if (field === 'title' && length > POST_LIMITS.titleMax) throw new HttpError(400, messages.titleTooLong);
  if (field === 'body' && length < POST_LIMITS.bodyMin) throw new HttpError(400, messages.bodyTooShort);
  if (field === 'body' && length > POST_LIMITS.bodyMax) throw new HttpError(400, messages.bodyTooLong);
  return trimmed;
}

/** PUT: only title, body and status are read; anything else is ignored and never written. */
export function readChanges(body: Record<string, unknown>): PostChanges {
  const { title, body: content, status } = body;
  if (title === undefined && content === undefined && status === undefined) {
    throw new HttpError(400, messages.noSupportedFields);
  }
  if (status !== undefined && !(STATUSES as readonly unknown[]).includes(status)) {
    throw new HttpError(400, messages.invalidStatus);
  }
  const changes: PostChanges = {};
  if (title !== undefined) changes.title = text(title, 'title');
  if (content !== undefined) changes.body = text(content, 'body');
  if (status !== undefined) changes.status = status as PostStatus;
  return changes;
}
