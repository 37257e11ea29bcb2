/** A MongoDB URL's database, named or replaced, whatever its hosts and options. */
import { describe, expect, it } from '@jest/globals';
import { databaseIn, withDatabase } from '../src/database-url';

describe('withDatabase and databaseIn', () => {
  it.each([
    ['mongodb://h:27017', '', 'mongodb://h:27017/posts'],
    ['mongodb://h:27017/', '', 'mongodb://h:27017/posts'],
    ['mongodb://h:27017/identity?directConnection=true', 'identity', 'mongodb://h:27017/posts?directConnection=true'],
    ['mongodb://u:p@a:1,b:2/notes?replicaSet=rs&w=1', 'notes', 'mongodb://u:p@a:1,b:2/posts?replicaSet=rs&w=1'],
    ['mongodb+srv://cluster.example/files', 'files', 'mongodb+srv://cluster.example/posts'],
  ])('when the URL is %s, then its database is "%s", and with posts it is %s', (url, database, withPosts) => {
    expect(databaseIn(url)).toBe(database);
    expect(withDatabase(url, 'posts')).toBe(withPosts);
  });
});
