/**
 * Service family: the public system information, the OpenAPI document and the reference page
 * over it, the operator console's page and files (shared/console/console-assets.ts), and the JSON
 * 404 for every path no other route matches (`$default`).
 */
import { servedDocument } from '#shared/docs/openapi.ts';
import { referenceBundle, referencePage } from '#shared/docs/page.ts';
import { notFound } from '#shared/errors.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { metering } from '#shared/usage/middleware.ts';
import { ok, okRaw, type BaseDeps, type Operation } from '#shared/http/operation-contract.ts';
import { createPublicDeps } from '#shared/public-deps.ts';
import { sysInfo } from '#shared/sysinfo.ts';
import { consoleAsset, consoleCsp, consoleFilesBeside, type ConsoleFiles } from '#shared/console/console-assets.ts';

const sysinfo: Operation<BaseDeps> = async (_req, deps) => ok(sysInfo(deps.config, deps.now()));

const openApi: Operation<BaseDeps> = async (req, deps) => {
  const { text, headers } = servedDocument(req, deps.config.publicUrl);
  return okRaw(text, { 'content-type': 'application/json; charset=utf-8', ...headers });
};

const docs: Operation<BaseDeps> = async () => {
  const { html, csp } = referencePage();
  return okRaw(html, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'public, max-age=300', 'content-security-policy': csp });
};

// The script changes only with a deployment; gzip whenever the client takes it (browsers do).
const docsAsset: Operation<BaseDeps> = async (req) => {
  const bundle = referenceBundle();
  const headers = { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=3600', vary: 'Accept-Encoding' };
  return /\bgzip\b/i.test(req.headers['accept-encoding'] ?? '')
    ? okRaw(bundle.gzipBase64, { ...headers, 'content-encoding': 'gzip' }, true)
    : okRaw(bundle.text, headers);
};

/** Where the console's built files come from: beside the code in AWS, an in-memory build locally. */
export interface ServiceDeps extends BaseDeps {
  readonly consoleFiles?: () => Promise<ConsoleFiles | undefined>;
}

const besideCode = async () => consoleFilesBeside();

async function consoleFilesOf(deps: ServiceDeps): Promise<ConsoleFiles> {
  const files = await (deps.consoleFiles ?? besideCode)();
  if (!files) throw notFound('The console is not part of this deployment.');
  return files;
}

// `/` and `/console` send the browser to `/console/`, the console's home (its page).
const consoleHome: Operation<ServiceDeps> = async (req, deps) =>
  req.path === '/console/' ? consolePage(req, deps) : { status: 302, headers: { location: '/console/', 'cache-control': 'no-cache' } };

// Every console URL is the same page (the page routes itself): reload and links work.
const consolePage: Operation<ServiceDeps> = async (_req, deps) => {
  const files = await consoleFilesOf(deps);
  return okRaw(files.index, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-cache',
    'content-security-policy': consoleCsp(deps.config.eventPublisherUrl),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
  });
};

// Hashed names: a new build has new names, so a browser keeps each file for good.
const consoleFile: Operation<ServiceDeps> = async (req, deps) => {
  const asset = consoleAsset(await consoleFilesOf(deps), req.params.file ?? '');
  const headers = { 'content-type': asset.contentType, 'cache-control': 'public, max-age=31536000, immutable', vary: 'Accept-Encoding', 'x-content-type-options': 'nosniff' };
  return /\bgzip\b/i.test(req.headers['accept-encoding'] ?? '')
    ? okRaw(asset.gzipBase64, { ...headers, 'content-encoding': 'gzip' }, true)
    : okRaw(asset.base64, headers, true);
};

const notFoundOperation: Operation<BaseDeps> = async (req) => {
  throw notFound(`No resource at ${req.method} ${req.path}.`);
};

export const operations = { sysinfo, openApi, docs, docsAsset, consoleHome, consolePage, consoleFile, notFound: notFoundOperation };

export const createHandler = (deps: () => ServiceDeps) => makeHandler({ family: 'service', operations, deps, middlewares: [metering] });

// Public routes only: no keys, no token verification in this bundle (shared/public-deps.ts).
export const handler = createHandler(() => createPublicDeps());
