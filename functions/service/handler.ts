/**
 * Service family: the public system information, the OpenAPI document and the reference page
 * over it, and the JSON 404 for every path no other route matches (`$default`).
 */
import { servedDocument } from '#shared/docs/openapi.ts';
import { referenceBundle, referencePage } from '#shared/docs/page.ts';
import { notFound } from '#shared/errors.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { metering } from '#shared/usage/middleware.ts';
import { ok, okRaw, type BaseDeps, type Operation } from '#shared/http/operation-contract.ts';
import { createPublicDeps } from '#shared/public-deps.ts';
import { sysInfo } from '#shared/sysinfo.ts';

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

const notFoundOperation: Operation<BaseDeps> = async (req) => {
  throw notFound(`No resource at ${req.method} ${req.path}.`);
};

export const operations = { sysinfo, openApi, docs, docsAsset, notFound: notFoundOperation };

export const createHandler = (deps: () => BaseDeps) => makeHandler({ family: 'service', operations, deps, middlewares: [metering] });

// Public routes only: no keys, no token verification in this bundle (shared/public-deps.ts).
export const handler = createHandler(() => createPublicDeps());
