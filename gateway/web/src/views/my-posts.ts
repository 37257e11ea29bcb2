/** The signed-in person's posts: write a draft, edit it, publish, unpublish, delete. */
import { api, type Post } from '../api';
import { alertBox, formatDate, h, replaceChildren } from '../dom';
import { act, actions, busy, clearFieldErrors, field, input, showError, textarea } from '../forms';
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

export function myPostsView(): HTMLElement {
  const alert = alertBox();
  const list = h('ul', { class: 'cards', 'aria-label': 'My posts' });

  const refresh = async () => {
    try {
      const posts = await api.myPosts();
      if (posts.length === 0) {
        replaceChildren(list, h('li', { class: 'empty' }, 'You have not written a post yet.'));
      } else {
        replaceChildren(list, ...posts.map((post) => postItem(post, refresh, alert)));
      }
    } catch (error) {
      alert.show((error as Error).message);
    }
  };

  const createAlert = alertBox();
  const title = input('title', { maxLength: 200 });
  const body = textarea('body', { rows: 6 });
  const tags = input('tags', { placeholder: 'travel, food' });
  const form = h(
    'form',
    { class: 'card', novalidate: true, 'aria-labelledby': 'new-post-heading' },
    h('h2', { id: 'new-post-heading' }, 'New post'),
    createAlert,
    field('Title', title),
    field('Body', body, 'At least 10 characters.'),
    field('Tags', tags, 'Optional. Separate with commas: letters, digits and hyphens.'),
    actions(h('button', { type: 'submit', class: 'primary' }, 'Save draft')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(form, async () => {
      try {
        await api.createPost({ title: title.value, body: body.value, tags: parseTags(tags.value) });
        form.reset();
        clearFieldErrors(form);
        createAlert.show('Draft saved. Publish it when it is ready.', 'ok');
        await refresh();
      } catch (error) {
        showError(form, createAlert, error);
      }
    });
  });

  void refresh();
  return h('section', null, h('h1', null, 'My posts'), form, h('h2', null, 'Your posts'), alert, list);
}

function postItem(post: Post, refresh: () => Promise<void>, alert: { show(message: string): void }): HTMLElement {
  const item = h('li', { class: 'card', 'data-post-id': post._id });
  const published = post.status === 'published';

  const run = (work: () => Promise<unknown>) =>
    act(item, alert, async () => {
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
              if (confirm(`Delete “${post.title}”? This cannot be undone.`)) void run(() => api.deletePost(post._id));
            },
          },
          'Delete',
        ),
      ),
    );

  function edit() {
    const editAlert = alertBox();
    const title = input('title', { value: post.title, maxLength: 200 });
    const body = textarea('body', { value: post.body, rows: 6 });
    const form = h(
      'form',
      { novalidate: true },
      editAlert,
      field('Title', title),
      field('Body', body, 'At least 10 characters.'),
      actions(
        h('button', { type: 'submit', class: 'primary' }, 'Save changes'),
        h('button', { type: 'button', onclick: show }, 'Cancel'),
      ),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void busy(form, async () => {
        try {
          await api.updatePost(post._id, { title: title.value, body: body.value });
          await refresh();
        } catch (error) {
          showError(form, editAlert, error);
        }
      });
    });
    replaceChildren(item, h('h3', null, 'Edit post'), form);
    title.focus();
  }

  show();
  return item;
}
