/**
 * Published posts: a list with a tag filter, an order and pages; one author's posts, the same way;
 * and one post on its own, its byline a link to its author's posts.
 */
import { api, type Post, type PostSort } from '../api';
import { alertBox, type Child, formatDate, h, replaceChildren } from '../dom';
import { input } from '../forms';
import { onLive } from '../live';
import { newestOnly, searchBox } from './search-box';

/** Several changes in a moment are one reload of the page shown. */
const RELOAD_AFTER_MS = 100;

const TAG = /^[a-z0-9-]{1,40}$/i;

export function tagList(tags: readonly string[]): HTMLElement | null {
  if (tags.length === 0) return null;
  return h(
    'ul',
    { class: 'tags', 'aria-label': 'Tags' },
    ...tags.map((tag) => h('li', null, h('a', { href: `#/?tag=${encodeURIComponent(tag)}` }, `#${tag}`))),
  );
}

function excerpt(body: string, length = 180): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat;
}

/** The orders a list can be read in, as the API names them, and as a person reads them. */
const SORTS: readonly { value: PostSort; label: string }[] = [
  { value: 'newest', label: 'Newest first' },
  { value: 'oldest', label: 'Oldest first' },
  { value: 'title', label: 'Title (A to Z)' },
];

function sortOf(raw: string | null): PostSort {
  return SORTS.find((sort) => sort.value === raw)?.value ?? 'newest';
}

/** An account id as the API writes it; anything else names no author. */
const AUTHOR_ID = /^[0-9a-f]{24}$/i;

/** The published posts: all of them at `#/`, or one author's at `#/authors/<id>`. */
interface ListScreen {
  /** The screen's own address, without its query. */
  base: string;
  author?: { id: string; heading: HTMLElement };
}

export function postListView(query: URLSearchParams, go: (hash: string) => void): HTMLElement {
  const tag = (query.get('tag') ?? '').trim().toLowerCase();
  const heading = h('h1', null, tag ? `Posts tagged #${tag}` : 'Posts');
  return h('section', null, heading, ...listOfPosts(query, go, { base: '#/' }));
}

/**
 * One author's published posts, reached from the byline of a post: the same list, pages and order
 * as the home list, of that author alone.
 */
export function authorView(authorId: string, query: URLSearchParams, go: (hash: string) => void): HTMLElement {
  if (!AUTHOR_ID.test(authorId)) {
    return h(
      'section',
      { class: 'card narrow' },
      h('h1', null, 'Author not found'),
      h('a', { href: '#/' }, 'Go to the posts'),
    );
  }
  const id = authorId.toLowerCase();
  const tag = (query.get('tag') ?? '').trim().toLowerCase();
  const tagged = tag ? ` tagged #${tag}` : '';
  const heading = h('h1', null, `Posts by this author${tagged}`);
  void api.authorName(id).then(
    (name) => {
      heading.textContent = `Posts by ${name ?? 'anonymous'}${tagged}`;
    },
    () => undefined, // the heading stays as it is: the list says the rest
  );
  return h(
    'section',
    null,
    h('p', null, h('a', { href: '#/' }, '← All posts')),
    heading,
    ...listOfPosts(query, go, { base: `#/authors/${id}`, author: { id, heading } }),
  );
}

/** The search box, the filter, the alert and the results of a list of published posts, with its pages. */
function listOfPosts(query: URLSearchParams, go: (hash: string) => void, screen: ListScreen): HTMLElement[] {
  const tag = (query.get('tag') ?? '').trim().toLowerCase();
  const sort = sortOf(query.get('sort'));
  // A search typed here shows its first page in place; its pages' links, and the filter, keep it.
  let q = (query.get('q') ?? '').trim();
  let page = Math.max(1, Number.parseInt(query.get('page') ?? '1', 10) || 1);
  const author = screen.author?.id;
  const alert = alertBox();
  const results = h('div', { class: 'results', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading…'));
  const tagInput = input('tag', { value: tag, placeholder: 'e.g. travel' });
  const sortChoice = h(
    'select',
    { name: 'sort' },
    ...SORTS.map((option) => h('option', { value: option.value, selected: option.value === sort }, option.label)),
  );
  const hash = (next: { tag?: string; sort?: PostSort; page?: number; q?: string }) => {
    const params = new URLSearchParams();
    if (next.q) params.set('q', next.q);
    if (next.tag) params.set('tag', next.tag);
    if (next.sort && next.sort !== 'newest') params.set('sort', next.sort);
    if (next.page && next.page > 1) params.set('page', String(next.page));
    const text = params.toString();
    return text ? `${screen.base}?${text}` : screen.base;
  };

  const filter = h(
    'form',
    { class: 'filter', role: 'search' },
    h('label', null, 'Filter by tag ', tagInput),
    h('label', null, 'Order ', sortChoice),
    h('button', { type: 'submit' }, 'Filter'),
    tag ? h('a', { href: hash({ sort, q }), class: 'button-link' }, 'Clear filter') : null,
  );
  filter.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = tagInput.value.trim().replace(/^#/, '').toLowerCase();
    if (value && !TAG.test(value)) {
      alert.show('A tag is 1 to 40 letters, digits or hyphens.');
      return;
    }
    go(hash({ tag: value, sort: sortOf(sortChoice.value), q }));
  });

  const search = searchBox({
    label: author ? 'Search this author’s posts' : 'Search posts',
    value: q,
    onSearch: (words) => {
      q = words;
      page = 1;
      void load();
    },
  });
  const newest = newestOnly();
  const load = () => {
    // Newer and older say where a page is only in the order by date, newest first (a search's is by relevance).
    const [back, forward] = sort === 'newest' && !q ? ['← Newer', 'Older →'] : ['← Previous', 'Next →'];
    const current = newest();
    const searched = q;
    return api.listPosts({ page, tag: TAG.test(tag) ? tag : undefined, author, sort, q }).then(
      async (found) => {
        if (!current()) return;
        if (searched) search.found(`${found.total} post${found.total === 1 ? '' : 's'} found for “${searched}”.`);
        else search.reset();
        if (found.posts.length === 0 && found.total > 0) {
          // Past the last page (an old link, or a page typed in): say so, and offer the last one.
          replaceChildren(
            results,
            h(
              'p',
              { class: 'empty' },
              `There is no page ${page}; the last page is ${found.pages}. `,
              h('a', { href: hash({ tag, sort, page: found.pages, q }) }, `Go to page ${found.pages}`),
            ),
          );
          return;
        }
        if (found.posts.length === 0) {
          const empty = searched ? `No published posts match “${searched}”.` : emptyList(tag, author !== undefined);
          replaceChildren(results, h('p', { class: 'empty' }, empty));
          return;
        }
        // An author's page names its author once, in its heading: its cards need no byline.
        const names = author ? undefined : await api.authorNames(found.posts).catch(() => undefined);
        if (!current()) return;
        replaceChildren(
          results,
          h('ul', { class: 'cards' }, ...found.posts.map((post) => postCard(post, names))),
          h(
            'nav',
            { class: 'pager', 'aria-label': 'Pages' },
            h(
              'a',
              { class: 'button-link', href: hash({ tag, sort, page: page - 1, q }), hidden: page <= 1, rel: 'prev' },
              back,
            ),
            h(
              'span',
              { class: 'page-of' },
              `Page ${found.page} of ${found.pages} · ${found.total} post${found.total === 1 ? '' : 's'}`,
            ),
            h(
              'a',
              {
                class: 'button-link',
                href: hash({ tag, sort, page: page + 1, q }),
                hidden: page >= found.pages,
                rel: 'next',
              },
              forward,
            ),
          ),
        );
      },
      (error: Error) => {
        if (!current()) return;
        results.replaceChildren();
        if (searched) search.failed(error.message);
        else alert.show(error.message);
      },
    );
  };
  void load();

  // A post published, changed or taken down anywhere: the page shown is read again, so its order,
  // pages and count stay those of the API. Until this screen is left.
  let reload: ReturnType<typeof setTimeout> | undefined;
  const stop = onLive((event) => {
    if (!results.isConnected) return stop();
    if (event.topic === 'notes') return;
    if (event.topic === 'posts' && event.kind === 'upsert') {
      if (tag && !event.post.tags.includes(tag)) return;
      if (author && event.post.authorId !== author) return;
    }
    clearTimeout(reload);
    reload = setTimeout(() => void load(), RELOAD_AFTER_MS);
  });

  return [search.element, filter, alert, results];
}

function emptyList(tag: string, ofAuthor: boolean): string {
  if (ofAuthor) {
    return tag ? `This author has no published posts tagged #${tag}.` : 'This author has no published posts yet.';
  }
  return tag ? `No published posts are tagged #${tag} yet.` : 'No posts have been published yet.';
}

/**
 * "by Ada" or "by anonymous", the name a link to the author's posts; nothing when the names could
 * not be read, or, with `orLink`, a link to them all the same.
 */
function byline(post: Post, names: Map<string, string | null> | undefined, orLink = false): Child[] {
  const href = `#/authors/${post.authorId}`;
  if (!names) return orLink ? [' · ', h('a', { href, class: 'author' }, 'More by this author')] : [];
  return [' · by ', h('a', { href, class: 'author' }, names.get(post.authorId) ?? 'anonymous')];
}

function postCard(post: Post, names: Map<string, string | null> | undefined): HTMLElement {
  return h(
    'li',
    { class: 'card post-card' },
    h('h2', { class: 'post-title' }, h('a', { href: `#/posts/${post._id}` }, post.title)),
    h('p', { class: 'meta' }, formatDate(post.publishedAt ?? post.createdAt), ...byline(post, names)),
    h('p', null, excerpt(post.body)),
    tagList(post.tags),
  );
}

export function postView(id: string): HTMLElement {
  const alert = alertBox();
  const article = h('article', { class: 'card post' }, h('p', { class: 'muted' }, 'Loading…'));
  void api.getPost(id).then(
    async (post) => {
      const names = await api.authorNames([post]).catch(() => undefined);
      replaceChildren(
        article,
        h('h1', null, post.title),
        h(
          'p',
          { class: 'meta' },
          post.status === 'draft' ? h('span', { class: 'badge draft' }, 'Draft') : null,
          formatDate(post.publishedAt ?? post.createdAt),
          ...byline(post, names, true),
        ),
        h('div', { class: 'body' }, ...post.body.split(/\n{2,}/).map((paragraph) => h('p', null, paragraph))),
        tagList(post.tags),
      );
    },
    (error: Error) => {
      article.remove();
      alert.show(error.message);
    },
  );
  return h('section', null, h('p', null, h('a', { href: '#/' }, '← All posts')), alert, article);
}
