/**
 * The thumbnails this replica knows are in storage, so a cached thumbnail's link is only signed,
 * with no HEAD of storage first: it then costs no more than an attachment's link. Bounded: the
 * least recently asked for are forgotten first, and a forgotten one costs one HEAD again.
 *
 * A removal never has to reach this memory: a thumbnail is asked for through its original's
 * record, which a removal marks released (or deletes) before the objects go, and a key is never
 * used again (upload-key.ts).
 */
export function createKnownThumbnails(max: number) {
  // A Map keeps insertion order: the first entry is the least recently asked for.
  const known = new Map<string, true>();
  return {
    has(key: string): boolean {
      if (!known.delete(key)) return false;
      known.set(key, true);
      return true;
    },
    add(key: string): void {
      known.delete(key);
      known.set(key, true);
      if (known.size > max) known.delete(known.keys().next().value as string);
    },
  };
}

export type KnownThumbnails = ReturnType<typeof createKnownThumbnails>;
