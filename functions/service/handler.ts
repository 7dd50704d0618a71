/**
 * Service family: the public system information, and the JSON 404 for every path no other
 * route matches (`$default`).
 */
import { createCoreDeps, type CoreDeps } from '#shared/deps.ts';
import { notFound } from '#shared/errors.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { ok, type Operation } from '#shared/http/types.ts';
import { sysInfo } from '#shared/sysinfo.ts';

const sysinfo: Operation<CoreDeps> = async (_req, deps) => ok(sysInfo(deps.config, deps.now()));

const notFoundOperation: Operation<CoreDeps> = async (req) => {
  throw notFound(`No resource at ${req.method} ${req.path}.`);
};

export const operations = { sysinfo, notFound: notFoundOperation };

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'service', operations, deps });

export const handler = createHandler(() => createCoreDeps());
