/**
 * `GET /docs`: the API reference, rendered in the browser by Scalar's standalone bundle from
 * `/api/openapi.json`; `GET /docs/api-reference.js` serves that bundle from the package files.
 * Nothing is loaded from anywhere else (no CDN, no fonts, no telemetry).
 *
 * Where the bundle is: in AWS, beside the function's code (infra/gatehouse-function.ts copies it
 * into the service function's asset); locally, in the installed `@scalar/api-reference` package.
 * It is read once per execution environment and kept gzip-compressed too: gzipped, the script
 * fits well inside Lambda's 6 MB response limit.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { notFound } from '../errors.ts';

/** The file name of the bundle beside the function's code. */
export const REFERENCE_ASSET = 'api-reference.js';

/** The standalone bundle inside the package. */
export function packagedReferenceBundle(): string {
  const entry = createRequire(import.meta.url).resolve('@scalar/api-reference');
  return join(dirname(entry), 'browser', 'standalone.js');
}

function locateBundle(): string | undefined {
  const beside = fileURLToPath(new URL(`./${REFERENCE_ASSET}`, import.meta.url));
  if (existsSync(beside)) return beside;
  try {
    const packaged = packagedReferenceBundle();
    return existsSync(packaged) ? packaged : undefined;
  } catch {
    return undefined;
  }
}

interface Bundle {
  readonly text: string;
  readonly gzipBase64: string;
}

let bundle: Bundle | undefined;

/** The script, plain and gzipped; 404 when this deployment was built without it. */
export function referenceBundle(): Bundle {
  if (!bundle) {
    const path = locateBundle();
    if (!path) throw notFound('The API reference script is not part of this deployment.');
    const bytes = readFileSync(path);
    bundle = { text: bytes.toString('utf8'), gzipBase64: gzipSync(bytes).toString('base64') };
  }
  return bundle;
}

/** The inline script that mounts the reference on the document. */
function mountScript(): string {
  const config = {
    url: '/api/openapi.json',
    // Everything from Gatehouse itself: no web fonts, no telemetry, no proxy, no hosted AI agent.
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: 'never',
    persistAuth: false,
    metaData: { title: 'Gatehouse API reference' },
  };
  return `Scalar.createApiReference('#app', ${JSON.stringify(config)});`;
}

/** The page and its Content-Security-Policy, built once. */
let page: { readonly html: string; readonly csp: string } | undefined;

/**
 * The page: the bundle, then the reference mounted on the document; and the policy it is served
 * with. The page renders an API description and may send requests to the API ("try it"), so a
 * script injected into it (through a crafted document or a compromised dependency) would act with
 * the reader's token: scripts run only from Gatehouse's own origin plus the one inline script, by
 * its hash; requests go only to this origin; nothing may frame the page, post a form elsewhere or
 * load a plugin. Styles stay `'unsafe-inline'`: Scalar's bundle injects its CSS at run time (style
 * cannot run script). Fonts and images: this origin and `data:` (the bundle inlines its icons).
 */
export function referencePage(): { readonly html: string; readonly csp: string } {
  if (!page) {
    const mount = mountScript();
    const hash = createHash('sha256').update(mount, 'utf8').digest('base64');
    const csp = [
      "default-src 'none'",
      `script-src 'self' 'sha256-${hash}'`,
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data:",
      "font-src 'self' data:",
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
      "object-src 'none'",
    ].join('; ');
    const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Gatehouse API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<div id="app"></div>
<script src="/docs/${REFERENCE_ASSET}"></script>
<script>${mount}</script>
</body>
</html>
`;
    page = { html, csp };
  }
  return page;
}
