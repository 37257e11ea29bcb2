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
 * The listing does not wait for a follow: reading the words of every post takes seconds at 10,000
 * posts and more than a minute at 100,000, and the list's pages need none of it. Searches wait
 * instead (`find`), for every follow begun before them, so what the listing lists is in the index
 * when they run; a follow that failed fails them until one succeeds (the listing is read whole
 * again within MAX_AGE_MS). While a follow from nothing fills a new index, the states the listing
 * applies go to both.
 *
 * Memory: about 45 MB per 10,000 posts of 86 words (bench/results, "search").
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
  /** The posts that match, best first, once every follow begun before this call is done. */
  find(query: SearchQuery): Promise<readonly Ranked[]>;
}

export function createListingSearch(posts: PostModel): ListingSearch {
  let index = new TextIndex(POST_SEARCH.boosts);
  /** The index a follow from nothing is filling, to replace `index` when whole. */
  let filling: TextIndex | undefined;
  /** The follows begun, one after another. */
  let following: Promise<void> = Promise.resolve();
  /** Why the last follow failed, until one succeeds. */
  let failure: unknown;

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

  async function follow(records: readonly PlacedRecord[], before: ListingIndex | undefined, fresh: boolean) {
    const to = fresh ? new TextIndex(POST_SEARCH.boosts) : index;
    if (fresh) filling = to;
    try {
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
      failure = undefined;
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      if (filling === to) filling = undefined;
    }
  }

  return {
    apply(id, record) {
      applyTo(index, id, record);
      if (filling) applyTo(filling, id, record);
    },

    drop(ids) {
      for (const id of ids) {
        index.remove(id);
        filling?.remove(id);
      }
    },

    follow(records, before, fresh) {
      following = following.catch(() => undefined).then(() => follow(records, before, fresh));
      return following;
    },

    async find(query) {
      await following.catch(() => undefined);
      if (failure !== undefined) throw new Error('the words of the listed posts could not be read', { cause: failure });
      return index.find(query);
    },
  };
}
