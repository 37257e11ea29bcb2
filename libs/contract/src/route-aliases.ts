/**
 * Paths served as well as the documented ones: each route is documented once (under the contract's
 * own path, or `/api/…` for ours), and the other prefix serves it too. Whatever matches requests to
 * documented routes (the gateway's metric labels, the conformance checks) knows an alias by this map.
 */
export const ROUTE_ALIASES: Readonly<Record<string, string>> = {
  '/api/upload-url': '/upload-url',
  '/api/notes/{id}/attachment': '/notes/{id}/attachment',
  '/multipart-uploads': '/api/multipart-uploads',
  '/multipart-uploads/{uploadId}': '/api/multipart-uploads/{uploadId}',
  '/multipart-uploads/{uploadId}/part-urls': '/api/multipart-uploads/{uploadId}/part-urls',
  '/multipart-uploads/{uploadId}/complete': '/api/multipart-uploads/{uploadId}/complete',
};

export interface ServedTemplate {
  /** What a request's path is matched against: a documented template, or an alias of one. */
  served: string;
  /** The documented template it stands for. */
  template: string;
  pattern: RegExp;
}

/** Every template served, fixed paths first (so `/api/posts/my-posts` is never `/api/posts/{id}`). */
export function servedTemplates(documented: readonly string[]): ServedTemplate[] {
  const pairs = [
    ...documented.map((template) => [template, template] as const),
    ...Object.entries(ROUTE_ALIASES).filter(([, template]) => documented.includes(template)),
  ];
  return pairs
    .map(([served, template]) => ({
      served,
      template,
      pattern: new RegExp(`^${served.replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
    }))
    .sort((a, b) => (a.served.match(/\{/g) ?? []).length - (b.served.match(/\{/g) ?? []).length);
}
