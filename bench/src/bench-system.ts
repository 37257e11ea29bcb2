/**
 * The system the whole run measures (scenarios 1 to 10): every part in a process of its own, the
 * bare proxy of scenario 1 in front of posts, and a user with one published post to read and 20
 * of their own for my-posts.
 */
import { join } from 'node:path';
import {
  freePort,
  httpOk,
  type MongoServer,
  type RunningServer,
  type RunningSystem,
  spawnChild,
  startSystem,
  waitFor,
  withDatabase,
} from '@cs/devstack';
import { markListingChanged } from '@cs/posts/operations';
import mongoose, { Types } from 'mongoose';
import { LIMITS_OFF } from './limits-off';
import { BCRYPT_COST, DIST, NODE, S3, SECRET } from './run-settings';

export type BenchSystem = Awaited<ReturnType<typeof startBenchSystem>>;

export async function startBenchSystem(
  dataDir: string,
  mongo: MongoServer,
  storage: RunningServer,
  own: (stoppable: { stop(): Promise<unknown> }) => void,
) {
  const system: RunningSystem = await startSystem({
    dataDir,
    mongoUrl: mongo?.url ?? '',
    storage: { endpoint: storage?.url ?? '', ...S3 },
    jwtSecret: SECRET,
    dbPrefix: `b${process.pid}_`,
    // One process per part: scenario 1 puts a bare proxy in front of posts' own process, and
    // these scenarios' history is of that mode (scenario 14 measures npm start's).
    oneProcess: false,
    env: {
      LOG_LEVEL: 'warn',
      ...LIMITS_OFF,
      BCRYPT_COST: BCRYPT_COST,
    },
  });
  own(system);
  const gw = system.gatewayUrl;
  const postsUrl = system.processes.posts.url;
  const postsDb = withDatabase(mongo?.url ?? '', `b${process.pid}_posts`);

  // The baseline process of scenario 1: the bare proxy.
  const proxyPort = await freePort();
  const logFile = (name: string) => join(dataDir, 'logs', `${name}.log`);
  const bare = spawnChild({
    name: 'bare-proxy',
    command: NODE,
    args: [join(DIST, 'bare-proxy.js'), String(proxyPort), postsUrl],
    logFile: logFile('bare-proxy'),
  });
  own(bare);
  const bareUrl = `http://127.0.0.1:${proxyPort}`;
  await waitFor('bare proxy', () => httpOk(`${bareUrl}/healthz`), { child: bare });

  // Data: a user, one published post to read, their own posts for my-posts.
  const email = `bench-${process.pid}@example.com`;
  const register = await fetch(`${gw}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'bench-password' }),
  });
  const token = ((await register.json()) as { token: string }).token;
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const userId = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()).id as string;
  const db = await mongoose.createConnection(postsDb).asPromise();
  const posts = db.collection('posts');
  const PostModel = db.model('Post', new mongoose.Schema({}, { strict: false, collection: 'posts' }));
  const now = Date.now();
  const doc = (i: number, extra: Record<string, unknown> = {}) => ({
    _id: new Types.ObjectId(),
    title: `Bench post ${i}`,
    body: 'A body of a realistic length for a short post in the list. '.repeat(3),
    authorId: new Types.ObjectId(userId),
    status: 'published',
    tags: ['bench'],
    publishedAt: new Date(now - i * 1000),
    createdAt: new Date(now - i * 1000),
    updatedAt: new Date(now - i * 1000),
    ...extra,
  });
  const readPost = doc(0);
  await posts.insertMany([readPost, ...Array.from({ length: 20 }, (_, i) => doc(i + 1, { tags: ['mine'] }))]);
  const postPath = `/api/posts/${readPost._id.toHexString()}`;
  return {
    system,
    gw,
    postsUrl,
    bareUrl,
    email,
    token,
    auth,
    db,
    posts,
    PostModel,
    doc,
    postPath,
    /** Posts written around the service: its kept listing is told, as any such write must. */
    listingChanged: () => markListingChanged(db),
  };
}
