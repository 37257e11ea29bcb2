/** The operations of the `posts` tag. */
import { LIMITS, OBJECT_ID_PATTERN, TAG_PATTERN } from '../limits';
import * as s from '../schemas';
import { slot } from './examples';
import { operation, type PathId } from './operation';
import { ref } from './responses';
import { searchParam } from './search';

const POST_ID: PathId = {
  description: 'The post’s record identifier (24 hex digits; anything else is 400).',
  example: slot('postId'),
};

export const postsPaths = {
  '/api/posts': {
    get: operation({
      id: 'listPosts',
      summary: 'List published posts, newest first unless sorted otherwise',
      description:
        'Paginated (`page`, `limit`), optionally by tag, by author, or both, and in another order (`sort`). Every filter and order is as fresh as the list: a publish or an unpublish, once answered, is in the next list read anywhere.',
      tag: 'posts',
      auth: 'optional',
      query: [
        { name: 'page', description: 'Positive integer, default 1; anything else falls back to 1.' },
        {
          name: 'limit',
          description: `Positive integer, default ${LIMITS.postsPageDefault}, capped at ${LIMITS.postsPageMax}; anything else falls back to ${LIMITS.postsPageDefault}.`,
        },
        { name: 'tag', description: `Applied only when it matches ${TAG_PATTERN}; lowercased.` },
        {
          name: 'author',
          description: `Only this account’s posts (a post’s \`authorId\`). Applied only when it matches ${OBJECT_ID_PATTERN}; lowercased; otherwise ignored, as a bad tag is.`,
        },
        {
          name: 'sort',
          description:
            '`newest` (the default: by createdAt, newest first), `oldest` (its reverse), or `title` (case-folded, A to Z; equal titles newest first, then by id). Any case; anything else is ignored and the list is newest first.',
          schema: { type: 'string', enum: s.POST_SORTS },
        },
        searchParam(
          'the published posts (title, body, tags)',
          'it combines with `tag` and `author`, pages as the list does, and `sort` is ignored.',
        ),
      ],
      errors: ['BadRequest'],
      ok: { status: 200, description: 'One page.', schema: ref('PostPage') },
      cached: true,
    }),
    post: operation({
      id: 'createPost',
      summary: 'Create a post (a draft) owned by the caller',
      tag: 'posts',
      auth: 'required',
      body: ref('CreatePost'),
      example: { title: 'Hello, world', body: 'My first post, written from the API reference.', tags: ['hello'] },
      ok: { status: 201, description: 'Created.', schema: ref('Post') },
    }),
  },
  '/api/posts/my-posts': {
    get: operation({
      id: 'myPosts',
      summary: 'List the caller’s posts of both statuses, newest first',
      description: `All of them, up to ${LIMITS.myPostsPageMax}; past that, the rest through the Link header.`,
      tag: 'posts',
      auth: 'required',
      paged: { defaultLimit: LIMITS.myPostsPageMax, maxLimit: LIMITS.myPostsPageMax },
      query: [
        searchParam(
          'the caller’s posts of both statuses (title, body, tags)',
          'further pages through the Link header.',
        ),
      ],
      ok: { status: 200, description: 'The posts.', schema: { type: 'array', items: ref('Post') } },
    }),
  },
  '/api/posts/{id}': {
    get: operation({
      id: 'getPost',
      summary: 'Get a post',
      description: 'A draft only to its author.',
      tag: 'posts',
      auth: 'optional',
      pathId: POST_ID,
      ok: { status: 200, description: 'The post.', schema: ref('Post') },
      cached: true,
    }),
    put: operation({
      id: 'updatePost',
      summary: 'Change the title, body or status of the caller’s post',
      tag: 'posts',
      auth: 'required',
      pathId: POST_ID,
      description:
        'Publishing, unpublishing and editing a published post reach every reader. A post’s first publish is never counted; past it (unpublishing, publishing again, editing while published) an account may make 60 such changes a minute (PUBLIC_CHANGES_PER_MINUTE), then 429 with Retry-After. Changes to drafts are not counted.',
      body: ref('UpdatePost'),
      example: { status: 'published' },
      ok: { status: 200, description: 'The updated post.', schema: ref('Post') },
      errors: ['Conflict', 'TooManyRequests'],
    }),
    patch: operation({
      id: 'patchPost',
      summary: 'Change any of the title, body, status and tags of a post',
      tag: 'posts',
      auth: 'required',
      pathId: POST_ID,
      description:
        'Not the contract’s PUT: tags too, and every field sent is applied in one write, or none when one breaks a rule (the rules and messages of PUT and of `PUT /api/posts/{id}/tags`). The answer is the post as `GET` answers it. Public changes are counted as PUT counts them.',
      body: ref('PatchPost'),
      example: { title: 'Hello again, world', tags: ['hello', 'travel'] },
      ok: { status: 200, description: 'The updated post.', schema: ref('Post') },
      errors: ['Conflict', 'TooManyRequests'],
    }),
    delete: operation({
      id: 'deletePost',
      summary: 'Delete the caller’s post',
      description: '204 whether or not one was deleted.',
      tag: 'posts',
      auth: 'required',
      pathId: POST_ID,
      ok: { status: 204, description: 'Done.' },
    }),
  },
  '/api/posts/{id}/tags': {
    put: operation({
      id: 'setPostTags',
      summary: 'Replace the tags of the caller’s post',
      description:
        'All of them at once; `[]` removes every one. Not the contract’s PUT, which ignores tags. A published post that leaves a tag is a `posts.remove` to the live subscribers of that tag.',
      tag: 'posts',
      auth: 'required',
      pathId: POST_ID,
      body: ref('PostTags'),
      example: { tags: ['intro', 'travel'] },
      ok: { status: 200, description: 'The updated post.', schema: ref('Post') },
      errors: ['Conflict'],
    }),
  },
} as const;
