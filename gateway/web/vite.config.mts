// The web client: plain TypeScript, built by Vite into static files the gateway serves at `/`.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  build: {
    outDir: fileURLToPath(new URL('../dist/public', import.meta.url)),
    emptyOutDir: true,
    // No inline scripts or styles: the gateway's Content-Security-Policy allows neither.
    assetsInlineLimit: 0,
    target: 'es2022',
  },
});
