/**
 * The API reference at /docs, in a real headless Chromium: Swagger UI must work under the page's
 * Content-Security-Policy, with not one console error (a refused script or style shows up there).
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { type GatewayProcess, spawnGateway } from '../helpers';
import { launchChromium } from './browser';

let gateway: GatewayProcess;
let browser: Browser;

beforeAll(async () => {
  [gateway, browser] = await Promise.all([spawnGateway({}), launchChromium()]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
});

it('when /docs opens in Chromium, then Swagger UI renders every operation under its CSP, with no console error', async () => {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));

  const answer = await page.goto(`${gateway.url}/docs`);
  const headers = answer?.headers() ?? {};
  expect(headers['content-security-policy']).toContain("script-src 'self'");
  expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['x-frame-options']).toBe('DENY');

  await page.locator('.opblock').first().waitFor({ timeout: 15_000 });
  expect(await page.locator('.opblock').count()).toBeGreaterThanOrEqual(15);
  expect(problems).toEqual([]);
  await page.close();
});
