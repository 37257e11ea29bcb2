/**
 * The words of every listed post, indexed in this process (`@cs/search`'s TextIndex), kept with
 * the listing (listing.ts) and so as fresh as it: a post is found once its publish is acknowledged,
 * on every replica, and never once its unpublish or delete is.
 *
 * The index follows each post's state as the listing applies it (`apply`, by version, so a state
 * read out of order is ignored) and each author's removal. When the listing is read whole, the
 * index is brought to it (`follow`): the posts it does not hold at their version are read with
 * their texts, and the whole read itself stays as cheap as it was (no texts). It never drops a post
 * there: one published after the whole read began is listed by the listing still answering reads.
 * A post it holds that is no longer listed (its removal was never logged, the database having
 * failed between the two writes) is never answered, since results are what the listing lists, and
 * it goes at the next whole read that finds it unlisted there and in the listing it replaces.
 *
 * Memory: the index takes about 5 kB per post of 130 words (bench/results, "search").
 */
import { type Ranked, type SearchQuery, TextIndex } from '@cs/search';
import type { ListingIndex, PlacedRecord } from './listing-index';
import type { PostModel, PostRecord } from './model';
import { POST_SEARCH } from './search-fields';

/** Past this many posts to read, one read of every published post is cheaper than one read each. */
const READ_EACH_MAX = 64;
/** Posts read at once when every published post is read. */
const BATCH = 200;
const FIELDS = '_id title body tags status version';

type Texts = Pick<PostRecord, '_id' | 'title' | 'body' | 'tags' | 'status' | 'version'>;

export interface ListingSearch {
  /** A post's state as the listing just applied it (null: deleted). */
  apply(id: string, record: Texts | null): void;
  /** Posts the listing no longer lists (their author's account is gone). */
  drop(ids: readonly string[]): void;
  /**
   * Brings the index to a whole read of the listing (`records`), `before` being the listing it
   * replaces. `fresh`: anything may have changed, whatever the versions say: a new index is made
   * from every listed post's words read now, and replaces this one when whole, so searches go on
   * meanwhile.
   */
  follow(records: readonly PlacedRecord[], before: ListingIndex | undefined, fresh: boolean): Promise<void>;
  /** The posts that match, best first. */
  find(query: SearchQuery): readonly Ranked[];
}

export function createListingSearch(posts: PostModel): ListingSearch {
  let index = new TextIndex(POST_SEARCH.boosts);

  function applyTo(to: TextIndex, id: string, record: Texts | null): void {
    if (record?.status !== 'published') to.remove(id);
    else to.set(id, record.version ?? 0, POST_SEARCH.texts(record));
  }

  /**
   * The texts of `ids`, each as read now, to `each`. Many are read as every published post, in
   * batches: the memory a read takes is a batch's texts, however many posts there are.
   */
  async function read(ids: string[], each: (record: Texts) => void): Promise<void> {
    if (ids.length > READ_EACH_MAX) {
      const all = posts.find({ status: 'published' }, FIELDS).lean<Texts[]>().cursor({ batchSize: BATCH });
      for await (const record of all) each(record as Texts);
      return;
    }
    const records = await Promise.all(ids.map((id) => posts.findById(id, FIELDS).lean<Texts>()));
    for (const record of records) if (record) each(record);
  }

  return {
    apply: (id, record) => applyTo(index, id, record),

    drop(ids) {
      for (const id of ids) index.remove(id);
    },

    async follow(records, before, fresh) {
      const to = fresh ? new TextIndex(POST_SEARCH.boosts) : index;
      const listed = new Set<string>();
      const behind: string[] = [];
      for (const record of records) {
        const id = record._id.toHexString();
        listed.add(id);
        if ((to.versionOf(id) ?? -1) < (record.version ?? 0)) behind.push(id);
      }
      for (const id of to.ids()) if (!listed.has(id) && !before?.placed(id)) to.remove(id);
      const wanted = new Set(behind);
      if (behind.length > 0)
        await read(behind, (record) => {
          const id = record._id.toHexString();
          if (wanted.has(id) && record.status === 'published') applyTo(to, id, record);
        });
      index = to;
    },

    find: (query) => index.find(query),
  };
}
