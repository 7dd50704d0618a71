/**
 * The access family's decision calls, by route-table name (loaded with the first of them: the
 * family's object calls never read the engine). Thin: parse, call the domain, answer.
 *
 * | call                                               | who                                   |
 * | -------------------------------------------------- | ------------------------------------- |
 * | POST `<folder>/accessdecisions`                    | any role (Record: Operator, Administrator) |
 * | GET `<folder>/readers/<key>/whocanpass`            | any role                              |
 * | GET `<folder>/people/<key>/accessiblereaders`      | any role                              |
 */
import { dateParam } from '../http/params.ts';
import { parsePaging } from '../http/paging-params.ts';
import { ok, pathParam, type Operation } from '../http/operation-contract.ts';
import { requireRole } from '../objects/tenant-scope.ts';
import { contextOf } from '../objects/domain-context.ts';
import { evaluate, parseDecisionBody, readerIn, recordRead, renderDecision } from './decisions.ts';
import { accessibleReaders, whoCanPass } from './troubleshoot.ts';

const accessDecision: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const read = parseDecisionBody(req.body, ctx.now);
  // A Controller (an edge controller's user) records the reads it decided (doors issue).
  if (read.record && ctx.principal.role !== 'Controller') requireRole(ctx, 'Operator', 'record card reads');
  const loaded = await readerIn(ctx, pathParam(req, 'folderKey'), read.readerKey);
  const outcome = read.record ? await recordRead(ctx, loaded, read, deps.config.eventRetentionDays) : await evaluate(ctx, loaded, read);
  return ok(renderDecision(ctx, loaded, outcome));
};

const whoCanPassOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const { page, pageSize } = parsePaging(req);
  return ok(await whoCanPass(ctx, pathParam(req, 'folderKey'), pathParam(req, 'key').toLowerCase(), dateParam(req, 'at') ?? ctx.now, page, pageSize));
};

const accessibleReadersOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  return ok(await accessibleReaders(ctx, pathParam(req, 'folderKey'), pathParam(req, 'key').toLowerCase(), dateParam(req, 'at') ?? ctx.now));
};

export const decisionOperations = { accessDecision, whoCanPass: whoCanPassOp, accessibleReaders: accessibleReadersOp };
