/** The operations of the mixed traffic: every read and write of the API, which service answers each, and their mix. */

export const OPS = [
  'listPosts',
  'getPost',
  'myPosts',
  'createPost',
  'updatePost',
  'deletePost',
  'createNote',
  'updateNote',
  'deleteNote',
  'listNotes',
  'login',
  'uploadUrl',
  'attachNote',
] as const;
export type OpName = (typeof OPS)[number];

/** Which service answers each operation. */
export const SERVICE_OF: Record<OpName, 'identity' | 'posts' | 'notes' | 'files'> = {
  listPosts: 'posts',
  getPost: 'posts',
  myPosts: 'posts',
  createPost: 'posts',
  updatePost: 'posts',
  deletePost: 'posts',
  createNote: 'notes',
  updateNote: 'notes',
  deleteNote: 'notes',
  listNotes: 'notes',
  login: 'identity',
  uploadUrl: 'files',
  attachNote: 'notes',
};

/**
 * Mostly reads, as in real use; every write the API has is in the mix. Deletes come on their
 * own: a create by a user already holding `keep` items deletes the oldest instead.
 */
export const DEFAULT_MIX: Record<OpName, number> = {
  listPosts: 30,
  getPost: 15,
  myPosts: 10,
  createPost: 10,
  updatePost: 8,
  deletePost: 0,
  createNote: 8,
  updateNote: 5,
  deleteNote: 0,
  listNotes: 8,
  login: 3,
  uploadUrl: 3,
  /** Off unless a run asks for it: needs storage reachable at the address in the upload link. */
  attachNote: 0,
};
