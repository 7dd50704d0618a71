/**
 * The door calls of the access family (issue 37), by route-table name, loaded with the first of
 * them. Thin: parse, call the domain (doors.ts), answer.
 *
 * | call                                            | who                                   |
 * | ----------------------------------------------- | ------------------------------------- |
 * | POST `<folder>/lockdown` `{ Reason }`           | Operator, Administrator               |
 * | DELETE `<folder>/lockdown`                      | Administrator                         |
 * | GET `<folder>/lockdown`                         | any role                              |
 * | PUT `<folder>/readers/<key>/mode`               | Operator, Administrator               |
 * | POST `<folder>/doors/<key>/unlock` `{ Seconds? }` | Operator, Administrator             |
 * | GET `<folder>/doors/<key>/status`               | any role                              |
 * | GET `<folder>/controllers/<key>/credentials`    | Administrator, Controller             |
 */
import { parsePaging } from '../http/paging-params.ts';
import { stringParam } from '../http/params.ts';
import { created, ok, pathParam, type Operation } from '../http/operation-contract.ts';
import { credentialDownload } from './credentials.ts';
import { contextOf } from '../objects/domain-context.ts';
import { doorStatus, endLockdown, getLockdown, setReaderMode, startLockdown, unlockDoor } from './doors.ts';

const startLockdownOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const r = await startLockdown(ctx, deps.config.eventRetentionDays, pathParam(req, 'folderKey'), req.body);
  return r.created ? created(r.body) : ok(r.body);
};

const endLockdownOp: Operation = async (req, deps) => ok(await endLockdown(contextOf(req, deps), deps.config.eventRetentionDays, pathParam(req, 'folderKey')));

const getLockdownOp: Operation = async (req, deps) => ok(await getLockdown(contextOf(req, deps), pathParam(req, 'folderKey')));

const setReaderModeOp: Operation = async (req, deps) =>
  ok(await setReaderMode(contextOf(req, deps), deps.config.eventRetentionDays, pathParam(req, 'folderKey'), pathParam(req, 'key'), req.body));

const unlockDoorOp: Operation = async (req, deps) =>
  ok(await unlockDoor(contextOf(req, deps), deps.config.eventRetentionDays, pathParam(req, 'folderKey'), pathParam(req, 'key').toLowerCase(), req.body));

const doorStatusOp: Operation = async (req, deps) => ok(await doorStatus(contextOf(req, deps), pathParam(req, 'folderKey'), pathParam(req, 'key').toLowerCase()));

const credentialsOp: Operation = async (req, deps) => {
  const { page, pageSize } = parsePaging(req);
  const answer = await credentialDownload(contextOf(req, deps), pathParam(req, 'folderKey'), pathParam(req, 'key'), {
    page,
    pageSize,
    since: stringParam(req, 'since'),
    ifNoneMatch: req.headers['if-none-match'],
  });
  const headers = { etag: `"${answer.version}"`, 'cache-control': 'no-cache' };
  return answer.status === 304 ? { status: 304, headers } : ok(answer.body, headers);
};

export const doorOperations = {
  startLockdown: startLockdownOp,
  endLockdown: endLockdownOp,
  getLockdown: getLockdownOp,
  setReaderMode: setReaderModeOp,
  unlockDoor: unlockDoorOp,
  doorStatus: doorStatusOp,
  credentials: credentialsOp,
};
