/** The routes the scale run loads, and how a system is loaded on one of them, or warmed up. */
import { measured, type Target } from './measured';
import { C, WARMUP_S } from './settings';

/** The load of each route, the authenticated write as the user `auth` carries. */
export function routesFor(auth: Record<string, string>) {
  const routes = {
    read: { path: '/api/posts', spec: {} },
    write: {
      path: '/api/posts',
      spec: {
        method: 'POST' as const,
        headers: auth,
        body: JSON.stringify({ title: 'Scale bench', body: 'A body long enough for the contract.' }),
      },
    },
    login: { path: '/api/auth/login', spec: { method: 'POST' as const, expect: 400 } },
  };
  type RouteName = keyof typeof routes;
  const at = (t: Target, route: RouteName, connections = C) => {
    const { path, spec } = routes[route];
    return connections === 1
      ? measured(t, 'one-at-a-time.js', { url: `${t.url}${path}`, connections, ...spec })
      : measured(t, 'load.js', { url: `${t.url}${path}`, connections, ...spec });
  };
  const warm = async (t: Target, ...names: RouteName[]) => {
    if (WARMUP_S <= 0) return;
    for (const name of names) {
      const { path, spec } = routes[name];
      await measured(t, 'load.js', { url: `${t.url}${path}`, connections: C, ...spec }, WARMUP_S);
    }
  };
  return { at, warm };
}

export type Routes = ReturnType<typeof routesFor>;
