/**
 * The texts of listed posts that this replica keeps (listing.ts), each at the version it was read
 * at, up to about TEXT_BUDGET_CHARS of titles and bodies: the least recently used go first, so the
 * most read pages keep their texts.
 */
import { type Post, type PostRecord, toPost } from './model';

/** About the memory the kept texts may take, in characters of titles and bodies. */
const TEXT_BUDGET_CHARS = 4_000_000;

interface KeptText {
  version: number;
  post: Post;
  chars: number;
}

export interface KeptTexts {
  /** Keeps the text of a published post as just read; returns it. */
  keep(record: PostRecord): Post;
  /** Forgets the post's text, if kept. */
  drop(id: string): void;
  /** The post's text, when kept at `version`, as most recently used; undefined when not. */
  at(id: string, version: number): Post | undefined;
  /** Forgets every text. */
  clear(): void;
}

export function createKeptTexts(): KeptTexts {
  const texts = new Map<string, KeptText>();
  let textChars = 0;

  function drop(id: string): void {
    const kept = texts.get(id);
    if (!kept) return;
    texts.delete(id);
    textChars -= kept.chars;
  }

  return {
    keep(record) {
      const id = record._id.toHexString();
      const post = toPost(record);
      drop(id);
      const chars = post.title.length + post.body.length;
      texts.set(id, { version: record.version ?? 0, post, chars });
      textChars += chars;
      for (const oldest of texts.keys()) {
        if (textChars <= TEXT_BUDGET_CHARS) break;
        drop(oldest);
      }
      return post;
    },

    drop,

    at(id, version) {
      const kept = texts.get(id);
      if (!kept || kept.version !== version) return undefined;
      // Most recently used last (Map keeps insertion order): the most read pages keep their texts.
      texts.delete(id);
      texts.set(id, kept);
      return kept.post;
    },

    clear() {
      texts.clear();
      textChars = 0;
    },
  };
}
