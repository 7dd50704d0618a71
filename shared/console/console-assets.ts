/**
 * Serving the operator console: `GET /` sends the browser to `/console/`; every console route
 * (`/console/...`, the page's own URLs) answers `index.html`, never cached; the hashed script and
 * stylesheet under `/console/assets/` are cached for good (`immutable`: a new build has new names).
 *
 * The files are built by console/build.ts: in AWS at synth, into `console/` beside the service
 * function's code (read here once per execution environment); locally in memory by the runtime.
 * The page's Content-Security-Policy allows nothing inline and nothing from another origin but the
 * live events' WebSocket.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { notFound } from '../errors.ts';

/** Where the built files are served from. */
export const CONSOLE_ASSET_PATH = '/console/assets/';

/** The folder beside the service function's code that holds the built console. */
export const CONSOLE_DIR = 'console';

/** A console build: `index.html`, and the hashed assets by file name. */
export interface ConsoleFiles {
  readonly index: string;
  readonly assets: ReadonlyMap<string, Uint8Array>;
}

/** The page: the stylesheet and the module script, nothing inline. */
export function consoleIndexHtml(script: string, style: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Gatehouse console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${style}">
<script type="module" src="${script}"></script>
</head>
<body>
<div id="app"><noscript>The Gatehouse console needs JavaScript.</noscript></div>
</body>
</html>
`;
}

let beside: { readonly files: ConsoleFiles | undefined } | undefined;

/** The console's files shipped beside this code (AWS), read once per execution environment; undefined when this build has none. */
export function consoleFilesBeside(): ConsoleFiles | undefined {
  beside ??= { files: readBeside() };
  return beside.files;
}

function readBeside(): ConsoleFiles | undefined {
  const dir = fileURLToPath(new URL(`./${CONSOLE_DIR}/`, import.meta.url));
  if (!existsSync(join(dir, 'index.html'))) return undefined;
  const assets = new Map<string, Uint8Array>();
  for (const name of readdirSync(join(dir, 'assets'))) assets.set(name, readFileSync(join(dir, 'assets', name)));
  return { index: readFileSync(join(dir, 'index.html'), 'utf8'), assets };
}

const TYPES: Readonly<Record<string, string>> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

/** An asset ready to send: plain and gzipped (base64), with its type. */
export interface ServedAsset {
  readonly contentType: string;
  readonly base64: string;
  readonly gzipBase64: string;
}

const served = new WeakMap<ConsoleFiles, Map<string, ServedAsset>>();

/** The asset `name` of a build, compressed once; 404 for any other name. */
export function consoleAsset(files: ConsoleFiles, name: string): ServedAsset {
  let cache = served.get(files);
  if (!cache) served.set(files, (cache = new Map()));
  const hit = cache.get(name);
  if (hit) return hit;
  const bytes = files.assets.get(name);
  const type = TYPES[name.slice(name.lastIndexOf('.') + 1)];
  if (!bytes || !type) throw notFound(`No console file ${name}.`);
  const asset = { contentType: type, base64: Buffer.from(bytes).toString('base64'), gzipBase64: gzipSync(bytes).toString('base64') };
  cache.set(name, asset);
  return asset;
}

/** The origin (`wss://host`) of an absolute WebSocket URL, for the page's `connect-src`. */
function webSocketOrigin(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    return u.protocol === 'ws:' || u.protocol === 'wss:' ? `${u.protocol}//${u.host}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The page's policy: scripts, styles, images and connections from the service itself, plus the
 * live events' WebSocket (another host in AWS); nothing inline, no `eval`, no frames.
 */
export function consoleCsp(eventPublisherUrl: string | undefined): string {
  const ws = webSocketOrigin(eventPublisherUrl);
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self'${ws ? ` ${ws}` : ''}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
    "manifest-src 'self'",
  ].join('; ');
}
