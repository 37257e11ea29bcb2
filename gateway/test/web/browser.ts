/**
 * Debian's Chromium, driven by playwright-core. Nothing is downloaded: `npm test` installs the
 * Debian package when it is missing (scripts/install-chromium.sh), and CHROMIUM_PATH may name
 * another binary.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, prepareBucket, REPO_ROOT, type RunningSystem } from '@cs/devstack';
import { ObjectStorage } from '@cs/storage';
import { startTestSystem, testStorageSettings } from '@cs/testkit';
import { type Browser, chromium, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ARTIFACTS = join(REPO_ROOT, 'test-artifacts', 'web');

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No Chromium at ${CHROMIUM}. Run bash scripts/install-chromium.sh, or set CHROMIUM_PATH.`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      '--no-first-run',
    ],
  });
}

/** A full-page screenshot under test-artifacts/web (git-ignored), for a person to look at. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

export interface BrowserSuite {
  /** A few hex digits of this suite's own, for names that must not meet another run's. */
  id: string;
  /** Where the gateway serves the page: the one origin the suite's bucket allows. */
  origin: string;
  system: RunningSystem;
  browser: Browser;
  /** The suite's bucket, and a client of the test's own to look into it. */
  storageSettings: ReturnType<typeof testStorageSettings>;
  storage: ObjectStorage;
  stop(): Promise<void>;
}

/**
 * The whole real system, with its gateway at http://127.0.0.1:<port> and a bucket of the
 * suite's own whose CORS rule allows exactly that origin, and a Chromium to drive it.
 */
export async function startBrowserSuite(label: string, env: Record<string, string> = {}): Promise<BrowserSuite> {
  const id = randomBytes(3).toString('hex');
  const storageSettings = { ...testStorageSettings(), bucket: `${label}-${id}` };
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  await prepareBucket({ ...storageSettings, corsOrigins: [origin] });
  // Both at once; when one fails, the other (if it started) is stopped before the failure is thrown.
  const [started, launched] = await Promise.allSettled([
    startTestSystem({ gatewayPort: port, frontendOrigin: origin, storage: storageSettings, env }),
    launchChromium(),
  ]);
  if (started.status === 'rejected' || launched.status === 'rejected') {
    if (started.status === 'fulfilled') await started.value.stop();
    if (launched.status === 'fulfilled') await launched.value.close();
    throw started.status === 'rejected' ? started.reason : (launched as PromiseRejectedResult).reason;
  }
  const system = started.value;
  const browser = launched.value;
  const storage = new ObjectStorage(storageSettings);
  return {
    id,
    origin,
    system,
    browser,
    storageSettings,
    storage,
    async stop() {
      await browser.close();
      await system.stop();
      storage.destroy();
    },
  };
}

/** A JSON request to the suite's API, as a script beside the page makes one (`token`: Bearer); its body. */
export async function callApi(
  web: BrowserSuite,
  path: string,
  method: string,
  body: unknown,
  token?: string,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${web.origin}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** A new person registered through the page, then on the Notes view. */
export async function registerToNotes(page: Page, web: BrowserSuite, email: string): Promise<void> {
  await page.goto(`${web.origin}/`);
  await page.getByRole('link', { name: 'Register', exact: true }).click();
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'My posts', level: 1 }).waitFor();
  await page.getByRole('link', { name: 'Notes', exact: true }).click();
  await page.getByRole('heading', { name: 'Notes', exact: true, level: 1 }).waitFor();
}
