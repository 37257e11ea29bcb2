/** The optional cache of public reads (`cache: true`). */
import type { Middleware } from 'openapi-fetch';

/**
 * Public reads sent with the ETag of the body kept from last time; a 304 is answered with that
 * body. Only answers the API lets caches keep (not `no-store`, which it sends to token holders).
 */
export function etagCache(): Middleware {
  const kept = new Map<string, { etag: string; body: string; type: string }>();
  return {
    onRequest({ request }) {
      const entry = request.method === 'GET' ? kept.get(request.url) : undefined;
      if (entry) request.headers.set('If-None-Match', entry.etag);
      return request;
    },
    async onResponse({ request, response }) {
      if (request.method !== 'GET') return response;
      const entry = kept.get(request.url);
      if (response.status === 304 && entry) {
        return new Response(entry.body, { status: 200, headers: { 'content-type': entry.type, etag: entry.etag } });
      }
      const etag = response.headers.get('etag');
      if (response.ok && etag && !/no-store/.test(response.headers.get('cache-control') ?? '')) {
        const body = await response.clone().text();
        kept.set(request.url, { etag, body, type: response.headers.get('content-type') ?? 'application/json' });
      }
      return response;
    },
  };
}
