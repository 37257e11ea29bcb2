/** The signed-in person's posts: write a draft, edit it, publish, unpublish, delete. */
import { LIMITS, TAG_PATTERN } from '@cs/contract/src/limits';
import { ApiError, api, type Post } from '../api';
import { alertBox, focusOn, formatDate, h, replaceChildren } from '../dom';
import { editInPlace } from '../edit-in-place';
import {
  act,
  actions,
  clearAfterSave,
  clearFieldErrors,
  clearWhenEdited,
  field,
  input,
  onSubmit,
  textarea,
} from '../forms';
import { tagList } from './posts';

function parseTags(text: string): string[] {
  return [
    ...new Set(
      text
        .split(/[\s,]+/)
        .map((tag) => tag.replace(/^#/, '').toLowerCase())
        .filter(Boolean),
    ),
  ];
}

const TAG = new RegExp(TAG_PATTERN);

/**
 * The tags of `text` as a save would send them; throws, before any request, what the API would
 * answer when one breaks the contract's rule (ASCII letters, digits and hyphens) or there are too
 * many, so that the person hears it before saving, not after.
 */
function tagsToSave(text: string): string[] {
  const tags = parseTags(text);
  const wrong = tags.filter((tag) => !TAG.test(tag));
  if (wrong.length === 0 && tags.length <= LIMITS.postTagsMax) return tags;
  const why =
    wrong.length > 0
      ? `${wrong.map((tag) => `“${tag}”`).join(', ')} cannot be a tag: only letters a to z, digits and hyphens, up to ${LIMITS.tagMax}`
      : `at most ${LIMITS.postTagsMax} tags`;
  throw new ApiError('Please check the tags.', 400, [
    { field: 'tags', message: `${why[0]?.toUpperCase()}${why.slice(1)}.` },
  ]);
}

export function myPostsView(): HTMLElement {
  const alert = alertBox();
  const heading = h('h2', null, 'Your posts');
  const list = h('ul', { class: 'cards', 'aria-label': 'My posts' });

  const refresh = async () => {
    try {
      const posts = await api.myPosts();
      if (posts.length === 0) {
        replaceChildren(list, h('li', { class: 'empty' }, 'You have not written a post yet.'));
      } else {
        replaceChildren(list, ...posts.map((post) => postItem(post, refresh, alert, heading, createAlert)));
      }
    } catch (error) {
      alert.show((error as Error).message);
    }
  };

  const createAlert = alertBox();
  const title = input('title', { maxLength: LIMITS.postTitleMax });
  const body = textarea('body', { rows: 6 });
  const tags = input('tags', { placeholder: 'travel, food' });
  const form = h(
    'form',
    { class: 'card', novalidate: true, 'aria-labelledby': 'new-post-heading' },
    h('h2', { id: 'new-post-heading' }, 'New post'),
    createAlert,
    field('Title', title),
    field('Text', body, 'At least 10 characters.'),
    field('Tags', tags, TAGS_HINT),
    actions(h('button', { type: 'submit', class: 'primary' }, 'Save draft')),
  );
  clearWhenEdited(form, createAlert);
  onSubmit(form, createAlert, async () => {
    await api.createPost({ title: title.value, body: body.value, tags: tagsToSave(tags.value) });
    clearAfterSave(form, createAlert, 'Draft saved. Publish it when it is ready.');
    await refresh();
  });

  void refresh();
  return h('section', null, h('h1', null, 'My posts'), nameForm(), form, heading, alert, list);
}

/** The name others see on the person's posts: set, changed, or cleared (then they see "anonymous"). */
function nameForm(): HTMLElement {
  const alert = alertBox();
  const name = input('displayName', { autocomplete: 'nickname', maxLength: 50 });
  const form = h(
    'form',
    { class: 'card', novalidate: true, 'aria-labelledby': 'name-heading' },
    h('h2', { id: 'name-heading' }, 'Your name'),
    alert,
    field('Name shown on your posts', name, 'Leave it empty to be shown as “anonymous”.'),
    actions(h('button', { type: 'submit' }, 'Save name')),
  );
  clearWhenEdited(form, alert);
  // The name as it is, unless the person has begun to type one meanwhile: theirs is kept.
  let typed = false;
  name.addEventListener('input', () => {
    typed = true;
  });
  form.setAttribute('aria-busy', 'true');
  void api
    .me()
    .then(
      (me) => {
        if (!typed) name.value = me.displayName ?? '';
      },
      () => undefined,
    )
    .finally(() => form.removeAttribute('aria-busy'));
  onSubmit(form, alert, async () => {
    const me = await api.setDisplayName(name.value.trim() || null);
    name.value = me.displayName ?? '';
    clearFieldErrors(form);
    alert.show(
      me.displayName ? `Your posts now say “by ${me.displayName}”.` : 'Your posts now say “by anonymous”.',
      'ok',
    );
    focusOn(alert);
  });
  return form;
}

const TAGS_HINT = 'Optional. Separate with commas: letters, digits and hyphens.';

function postItem(
  post: Post,
  refresh: () => Promise<void>,
  alert: { show(message: string): void },
  listHeading: HTMLElement,
  /** The new post form's message ("Draft saved"): done with once a post is acted on. */
  createAlert: { clear(): void },
): HTMLElement {
  const item = h('li', { class: 'card', 'data-post-id': post._id });
  const published = post.status === 'published';

  const run = (work: () => Promise<unknown>) =>
    act(item, alert, async () => {
      createAlert.clear();
      await work();
      await refresh();
    });

  const show = () =>
    replaceChildren(
      item,
      h(
        'h3',
        null,
        published ? h('a', { href: `#/posts/${post._id}` }, post.title) : post.title,
        ' ',
        h('span', { class: `badge ${post.status}` }, published ? 'Published' : 'Draft'),
      ),
      h(
        'p',
        { class: 'meta' },
        `Written ${formatDate(post.createdAt)}`,
        published ? ` · published ${formatDate(post.publishedAt)}` : '',
      ),
      h('p', { class: 'body-preview' }, post.body),
      tagList(post.tags),
      actions(
        h('button', { type: 'button', onclick: edit }, 'Edit'),
        h(
          'button',
          {
            type: 'button',
            onclick: () => run(() => api.updatePost(post._id, { status: published ? 'draft' : 'published' })),
          },
          published ? 'Unpublish' : 'Publish',
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: () => {
              if (!confirm(`Delete “${post.title}”? This cannot be undone.`)) return;
              // The item goes: the focus goes to the list's heading.
              void run(() => api.deletePost(post._id)).then(() => focusOn(listHeading));
            },
          },
          'Delete',
        ),
      ),
    );

  function edit() {
    createAlert.clear();
    const title = input('title', { value: post.title, maxLength: LIMITS.postTitleMax });
    const body = textarea('body', { value: post.body, rows: 6 });
    const tags = input('tags', { value: post.tags.join(', ') });
    editInPlace(item, {
      heading: 'Edit post',
      fields: [field('Title', title), field('Text', body, 'At least 10 characters.'), field('Tags', tags, TAGS_HINT)],
      first: title,
      show,
      save: () => {
        // One request: the text and the tags are saved together, or neither is.
        const nextTags = tagsToSave(tags.value);
        return api.patchPost(post._id, {
          title: title.value,
          body: body.value,
          ...(nextTags.join() !== post.tags.join() ? { tags: nextTags } : {}),
        });
      },
      refresh,
      redrawn: () => listHeading.parentElement?.querySelector<HTMLElement>(`li[data-post-id="${post._id}"] h3`),
    });
  }

  show();
  return item;
}
