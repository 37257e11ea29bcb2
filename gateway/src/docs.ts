/**
 * The API document at /openapi.json and a readable reference at /docs (Swagger UI, served from
 * the installed swagger-ui-dist package: nothing is fetched from the internet at run time).
 */
import { dirname, join } from 'node:path';
import { openApiDocument } from '@cs/contract';
import { type Response, Router } from 'express';
import { docsPolicy } from './security-headers';

const ASSETS = dirname(require.resolve('swagger-ui-dist/package.json'));
const SERVED_ASSETS = new Set([
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-32x32.png',
]);

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${openApiDocument.info.title} ${openApiDocument.info.version}</title>
  <link rel="icon" href="/docs/assets/favicon-32x32.png">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="reference"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#reference', deepLinking: true });\n`;

export function docsRoutes(): Router {
  const router = Router();
  const document = JSON.stringify(openApiDocument);
  const cached = (res: Response) => res.set('cache-control', 'public, max-age=300');

  router.get('/openapi.json', (_req, res) => {
    cached(res).type('application/json').send(document);
  });
  router.get('/docs', docsPolicy(), (_req, res) => {
    cached(res).type('html').send(PAGE);
  });
  router.get('/docs/init.js', (_req, res) => {
    cached(res).type('application/javascript').send(INIT);
  });
  router.get('/docs/assets/:file', (req, res, next) => {
    if (!SERVED_ASSETS.has(req.params.file)) return next();
    cached(res).sendFile(join(ASSETS, req.params.file));
  });
  return router;
}
