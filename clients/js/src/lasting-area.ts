/**
 * Where the client keeps what must outlive a reload (unfinished multipart uploads, a sign-in's
 * verifier while the person is away at the provider): localStorage if there is one, and memory,
 * for as long as the client lives, where there is none (Node, say).
 */
export function lastingArea(): Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> & { keys(): string[] } {
  if (typeof localStorage !== 'undefined') {
    const area = localStorage;
    return {
      getItem: (k) => area.getItem(k),
      setItem: (k, v) => area.setItem(k, v),
      removeItem: (k) => area.removeItem(k),
      keys: () => Array.from({ length: area.length }, (_, i) => area.key(i) ?? ''),
    };
  }
  const memory = new Map<string, string>();
  return {
    getItem: (k) => memory.get(k) ?? null,
    setItem: (k, v) => void memory.set(k, v),
    removeItem: (k) => void memory.delete(k),
    keys: () => [...memory.keys()],
  };
}

export type LastingArea = ReturnType<typeof lastingArea>;
