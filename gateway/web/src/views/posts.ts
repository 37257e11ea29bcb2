/** Published posts: a list with a tag filter and pages, and one post on its own. */
import { api, type Post } from '../api';
import { alertBox, formatDate, h, replaceChildren } from '../dom';
import { input } from '../forms';
import { onLive } from '../live';

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

export function postListView(query: URLSearchParams, go: (hash: string) => void): HTMLElement {
  const tag = (query.get('tag') ?? '').trim().toLowerCase();
  const page = Math.max(1, Number.parseInt(query.get('page') ?? '1', 10) || 1);
  const alert = alertBox();
  const results = h('div', { class: 'results', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading…'));
  const tagInput = input('tag', { value: tag, placeholder: 'e.g. travel' });
  const hash = (next: { tag?: string; page?: number }) => {
    const params = new URLSearchParams();
    if (next.tag) params.set('tag', next.tag);
    if (next.page && next.page > 1) params.set('page', String(next.page));
    const text = params.toString();
    return text ? `#/?${text}` : '#/';
  };

  const filter = h(
    'form',
    { class: 'filter', role: 'search' },
    h('label', null, 'Filter by tag ', tagInput),
    h('button', { type: 'submit' }, 'Filter'),
    tag ? h('a', { href: '#/', class: 'button-link' }, 'Clear filter') : null,
  );
  filter.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = tagInput.value.trim().replace(/^#/, '').toLowerCase();
    if (value && !TAG.test(value)) {
      alert.show('A tag is 1 to 40 letters, digits or hyphens.');
      return;
    }
    go(hash({ tag: value }));
  });

  const load = () =>
    api.listPosts({ page, tag: TAG.test(tag) ? tag : undefined }).then(
      async (found) => {
        if (found.posts.length === 0 && found.total > 0) {
          // Past the last page (an old link, or a page typed in): say so, and offer the last one.
          replaceChildren(
            results,
            h(
              'p',
              { class: 'empty' },
              `There is no page ${page}; the last page is ${found.pages}. `,
              h('a', { href: hash({ tag, page: found.pages }) }, `Go to page ${found.pages}`),
            ),
          );
          return;
        }
        if (found.posts.length === 0) {
          replaceChildren(
            results,
            h(
              'p',
              { class: 'empty' },
              tag ? `No published posts are tagged #${tag} yet.` : 'No posts have been published yet.',
            ),
          );
          return;
        }
        const names = await api.authorNames(found.posts).catch(() => undefined);
        replaceChildren(
          results,
          h('ul', { class: 'cards' }, ...found.posts.map((post) => postCard(post, names))),
          h(
            'nav',
            { class: 'pager', 'aria-label': 'Pages' },
            h(
              'a',
              { class: 'button-link', href: hash({ tag, page: page - 1 }), hidden: page <= 1, rel: 'prev' },
              '← Newer',
            ),
            h(
              'span',
              { class: 'page-of' },
              `Page ${found.page} of ${found.pages} · ${found.total} post${found.total === 1 ? '' : 's'}`,
            ),
            h(
              'a',
              { class: 'button-link', href: hash({ tag, page: page + 1 }), hidden: page >= found.pages, rel: 'next' },
              'Older →',
            ),
          ),
        );
      },
      (error: Error) => {
        results.replaceChildren();
        alert.show(error.message);
      },
    );
  void load();

  // A post published, changed or taken down anywhere: the page shown is read again, so its order,
  // pages and count stay those of the API. Until this screen is left.
  let reload: ReturnType<typeof setTimeout> | undefined;
  const stop = onLive((event) => {
    if (!results.isConnected) return stop();
    if (event.topic === 'notes') return;
    if (event.topic === 'posts' && event.kind === 'upsert' && tag && !event.post.tags.includes(tag)) return;
    clearTimeout(reload);
    reload = setTimeout(() => void load(), RELOAD_AFTER_MS);
  });

  return h('section', null, h('h1', null, tag ? `Posts tagged #${tag}` : 'Posts'), filter, alert, results);
}

/** "by Ada" or "by anonymous"; nothing when the names could not be read. */
function byline(post: Post, names: Map<string, string | null> | undefined): string {
  if (!names) return '';
  return ` · by ${names.get(post.authorId) ?? 'anonymous'}`;
}

function postCard(post: Post, names: Map<string, string | null> | undefined): HTMLElement {
  return h(
    'li',
    { class: 'card post-card' },
    h('h2', { class: 'post-title' }, h('a', { href: `#/posts/${post._id}` }, post.title)),
    h('p', { class: 'meta' }, formatDate(post.publishedAt ?? post.createdAt), byline(post, names)),
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
          byline(post, names),
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
