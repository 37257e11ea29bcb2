import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '@cs/devstack';
import { describe, expect, it } from '@jest/globals';
import express from 'express';
import request from 'supertest';
import { webClient } from '../../src/web';
import { spawnGateway } from '../helpers';

function builtClient(): string {
  const root = mkdtempSync(join(tmpdir(), 'web-'));
  mkdirSync(join(root, 'assets'));
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>t</title>');
  writeFileSync(join(root, 'assets', 'index-abc123.js'), 'console.log(1)');
  writeFileSync(join(root, 'secret.txt'), 'not an asset');
  return root;
}

describe('the web client files, as the gateway serves them', () => {
  const app = express().use(webClient(builtClient()));

  it('serves the page at / with a strict Content-Security-Policy, revalidated on every load', async () => {
    const res = await request(app).get('/');

    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it('serves hashed assets as immutable, and nothing outside assets/ but the page', async () => {
    const asset = await request(app).get('/assets/index-abc123.js');
    expect(asset.status).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');

    expect((await request(app).get('/secret.txt')).status).toBe(404);
    expect((await request(app).get('/assets/../secret.txt')).status).toBe(404);
    expect((await request(app).get('/assets/%2e%2e/secret.txt')).status).toBe(404);
  });

  it('the gateway serves the built client at /, and API paths still get JSON', async () => {
    const built = join(REPO_ROOT, 'gateway', 'dist', 'public', 'assets');
    const script = readdirSync(built).find((f) => f.endsWith('.js'));
    expect(script).toBeDefined();
    const gateway = await spawnGateway({});
    try {
      const page = await fetch(`${gateway.url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain(`<script type="module" crossorigin src="/assets/${script}">`);
      // The page's own policy, with the gateway's security headers around it.
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');

      const missing = await fetch(`${gateway.url}/api/nothing-here`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toEqual({ error: 'Not found' });
    } finally {
      await gateway.stop();
    }
  });
});
