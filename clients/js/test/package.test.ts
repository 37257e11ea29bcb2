/**
 * The library as a front-end team gets it: its types are the OpenAPI document's, its size is
 * within budget, and it installs into an empty project outside the repository exactly as its README
 * says, where the README's example type-checks and runs against the real system (and wrong calls do
 * not compile).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { REPO_ROOT, type RunningSystem } from '@cs/devstack';
import { startTestSystem } from '@cs/testkit';
import { afterAll, describe, expect, it } from '@jest/globals';
import { buildSync } from 'esbuild';

const LIBRARY = join(REPO_ROOT, 'clients', 'js');
const TSC = join(REPO_ROOT, 'node_modules', '.bin', 'tsc');
const work = mkdtempSync(join(tmpdir(), 'client-consumer-'));
let system: RunningSystem | undefined;

afterAll(async () => {
  await system?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** The first fenced block of `language` after `heading` in a Markdown text. */
function codeAfter(markdown: string, heading: string, language: string): string {
  const from = markdown.indexOf(`\n${heading}\n`);
  const block = new RegExp(`\\n\`\`\`${language}\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(markdown.slice(from));
  if (from === -1 || !block?.[1]) throw new Error(`no ${language} block after ${heading}`);
  return block[1];
}

describe('the packaged library', () => {
  it('its generated types are the OpenAPI document’s as it is now', () => {
    const check = spawnSync(process.execPath, ['scripts/generate.mjs', '--check'], { cwd: LIBRARY, encoding: 'utf8' });
    expect({ status: check.status, stderr: check.stderr }).toEqual({ status: 0, stderr: '' });
  });

  it('bundled, minified and gzipped it is at most 10 kB, and the generated types add no code', () => {
    const bundle = buildSync({
      entryPoints: [join(LIBRARY, 'dist', 'index.js')],
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'neutral',
      write: false,
    });
    const gzipped = gzipSync(bundle.outputFiles[0]?.contents ?? new Uint8Array(), { level: 9 }).length;
    process.stdout.write(`client library: ${gzipped} bytes minified and gzipped (openapi-fetch included)\n`);
    // 8 kB until subscribe() (live updates, 1 kB with its event-stream reader) came in; 9 kB until
    // the library was split by resource and its topics generated from the contract (about 180
    // bytes: each file's calls and types are bound apart, where one closure shared its names); 9.5 kB
    // until verified addresses, e-mail change and sign-in with providers came in (0.7 kB, 0.4 of it
    // the PKCE flow that keeps its verifier across the navigation; the upload memo's storage serves
    // it too).
    expect(gzipped).toBeLessThanOrEqual(10 * 1024);
    expect(readFileSync(join(LIBRARY, 'dist', 'schema.js'), 'utf8').trim()).toBe('export {};');
    // What the docs say of it is what it is, within half a kilobyte.
    for (const doc of [join(LIBRARY, 'README.md'), join(REPO_ROOT, 'docs', 'clients.md')]) {
      const stated = /about ([\d.]+) kB minified and gzipped/i.exec(readFileSync(doc, 'utf8'))?.[1];
      expect({ doc, off: Math.abs(Number(stated) - gzipped / 1024) <= 0.5 }).toEqual({ doc, off: true });
    }
  });

  it('installed as its README says, in an empty project outside the repository: the README’s example type-checks and runs against the system, and wrong calls do not compile', async () => {
    system = await startTestSystem();
    const readme = readFileSync(join(LIBRARY, 'README.md'), 'utf8');
    const app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    // The README's install steps, word for word, each where it says: its /tmp is this test's own.
    let cwd = REPO_ROOT;
    for (const line of codeAfter(readme, '## Install', 'sh').split('\n')) {
      if (line.startsWith('# In the clone')) cwd = REPO_ROOT;
      else if (line.startsWith('# In your project')) cwd = app;
      else if (line.trim() && !line.startsWith('#')) {
        const step = spawnSync('sh', ['-c', line.replaceAll('/tmp', work)], { cwd, encoding: 'utf8' });
        expect({ step: line, status: step.status, stderr: step.status === 0 ? '' : step.stderr }).toEqual({
          step: line,
          status: 0,
          stderr: '',
        });
      }
    }
    expect(readdirSync(join(app, 'node_modules', '@content-service', 'client', 'dist'))).toContain('index.d.ts');

    const compilerOptions = {
      strict: true,
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2022', 'DOM'],
      types: [],
      skipLibCheck: true,
      outDir: 'dist',
    };
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions, files: ['readme.ts', 'main.ts', 'wrong.ts'] }),
    );
    writeFileSync(
      join(app, 'tsconfig.control.json'),
      JSON.stringify({ compilerOptions: { ...compilerOptions, noEmit: true }, files: ['control.ts'] }),
    );
    // The README's first example, as it is, against the test's system rather than localhost:3000.
    const example = codeAfter(readme, '## Log in, and a typed call', 'ts');
    expect(example).toContain("baseUrl: 'http://localhost:3000'");
    writeFileSync(join(app, 'readme.ts'), example.replace('http://localhost:3000', system.gatewayUrl));
    writeFileSync(
      join(app, 'main.ts'),
      `import { ApiError, createContentClient } from '@content-service/client';
declare const process: { argv: string[] };
const client = createContentClient({ baseUrl: process.argv[2] });
await client.register(\`consumer-\${Date.now()}@example.com\`, 'correct horse battery');
const post = await client.posts.create({ title: 'From a consumer', body: 'Installed from the packed tarball.' });
const key = await client.upload(new Blob(['hello'], { type: 'text/plain' }), { filename: 'hello.txt' });
const note = await client.notes.create({ title: 'With a file', attachmentKey: key });
let notFound = 0;
try {
  await client.posts.get('0123456789abcdef01234567');
} catch (error) {
  if (error instanceof ApiError) notFound = error.status;
}
console.log(JSON.stringify({ status: post.status, attached: note.attachmentKey === key, notFound }));
`,
    );
    writeFileSync(
      join(app, 'wrong.ts'),
      `import { createContentClient } from '@content-service/client';
const client = createContentClient();
// @ts-expect-error: a post needs a title
void client.posts.create({ body: 'No title here at all.' });
// @ts-expect-error: status is draft or published
void client.posts.update('0123456789abcdef01234567', { status: 'archived' });
// @ts-expect-error: a note's id is a string
void client.notes.get(42);
const changes = { title: 'Renamed', tags: ['news'] };
// @ts-expect-error: the contract's PUT ignores tags, so update takes none, even from a variable (patch does)
void client.posts.update('0123456789abcdef01234567', changes);
// @ts-expect-error: the list's order is newest, oldest or title
void client.posts.list({ sort: 'random' });
`,
    );
    // The control: an expectation of an error on a right call must itself fail to compile.
    writeFileSync(
      join(app, 'control.ts'),
      `import { createContentClient } from '@content-service/client';
const client = createContentClient();
// @ts-expect-error: but this call is right
void client.posts.create({ title: 'Fine', body: 'A body that is long enough.' });
`,
    );

    const typecheck = spawnSync(TSC, ['-p', 'tsconfig.json'], { cwd: app, encoding: 'utf8' });
    expect({ status: typecheck.status, out: typecheck.stdout }).toEqual({ status: 0, out: '' });
    const control = spawnSync(TSC, ['-p', 'tsconfig.control.json'], { cwd: app, encoding: 'utf8' });
    expect(control.status).not.toBe(0);
    expect(control.stdout).toContain("Unused '@ts-expect-error' directive");

    const readmeRun = spawnSync(process.execPath, [join(app, 'dist', 'readme.js')], { encoding: 'utf8' });
    expect({ status: readmeRun.status, stderr: readmeRun.stderr, stdout: readmeRun.stdout }).toEqual({
      status: 0,
      stderr: '',
      stdout: "[ 'Hello' ] 1 [ 'Hello' ]\n",
    });

    const run = spawnSync(process.execPath, [join(app, 'dist', 'main.js'), system.gatewayUrl], { encoding: 'utf8' });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toEqual({ status: 'draft', attached: true, notFound: 404 });
  }, 120_000);
});
