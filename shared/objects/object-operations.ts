/**
 * The HTTP operations of the object model, thin: parse the request, call the domain, respond.
 * Every family that serves object collections spreads the `collection` operations into its
 * operations map (the route row carries the collection); the folders family adds the `folder`
 * ones, the devices family the `peripheral` ones, the people family the `people` one (bycard).
 * `objectOperations(hooks)` gives a family the same operations with its hooks (see `ObjectHooks` in `domain-context.ts`).
 *
 * The reads are here. The operations that change something are in `write-operations.ts`, loaded
 * with the first of them: the validators, the behaviours, the transactions and the relationship
 * service they bring are code a cold start that serves a read never reads.
 */
import { notFound } from '../errors.ts';
import { ok, pathParam, queryValue, type ApiRequest, type BaseDeps, type Operation } from '../http/operation-contract.ts';
import { collectionByName, type CollectionDef } from '../model/collections.ts';
import { locate, type Locator } from './tenant-scope.ts';
import { personByCard } from './card-reads.ts';
import { NO_HOOKS, contextOf, type Ctx, type ObjectHooks } from './domain-context.ts';
import { readLink } from './links.ts';
import { listObjects, parsePaging } from './paging.ts';
import { view } from './view.ts';
import { onFirstUse } from '../first-use.ts';

type Operations = Readonly<Record<string, Operation<BaseDeps>>>;
type ContextOf = (req: ApiRequest, deps: BaseDeps) => Ctx;
/** The write operations' module, loaded by the first write of this execution environment. */
const writes = onFirstUse(() => import('./write-operations.ts'));

/** The collection of a generic route row. */
function collectionOf(req: ApiRequest): CollectionDef {
  const def = req.route.collection ? collectionByName(req.route.collection) : undefined;
  if (!def) throw notFound(`No collection at ${req.path}.`);
  return def;
}

const memberAt = (req: ApiRequest): Locator => ({
  kind: 'member',
  collection: collectionOf(req).name,
  folderKey: pathParam(req, 'folderKey'),
  key: pathParam(req, 'key'),
});
const folderAt = (req: ApiRequest): Locator => ({ kind: 'folder', key: pathParam(req, 'folderKey') });
const peripheralAt = (req: ApiRequest): Locator => ({ kind: 'peripheral', folderKey: pathParam(req, 'folderKey'), key: pathParam(req, 'key') });

/** GET, PUT and DELETE of an object, and its sub-resources, wherever the locator points. */
function operationsAt(at: (req: ApiRequest) => Locator, ctxOf: ContextOf) {
  const get: Operation = async (req, deps) => {
    const ctx = ctxOf(req, deps);
    return ok(view(ctx, await locate(ctx, at(req))));
  };
  const replace: Operation = async (req, deps) => (await writes()).replace(ctxOf(req, deps), at(req), req.body);
  const remove: Operation = async (req, deps) => (await writes()).remove(ctxOf(req, deps), at(req));
  const getLink: Operation = async (req, deps) => ok(await readLink(ctxOf(req, deps), at(req), pathParam(req, 'link')));
  const postLink: Operation = async (req, deps) => (await writes()).postLink(ctxOf(req, deps), at(req), pathParam(req, 'link'), req.body);
  const deleteLinkItem: Operation = async (req, deps) =>
    (await writes()).deleteLinkItem(ctxOf(req, deps), at(req), pathParam(req, 'link'), pathParam(req, 'linkKey'));
  const putLink: Operation = async (req, deps) => (await writes()).putLink(ctxOf(req, deps), at(req), pathParam(req, 'link'), req.body);
  const putLinkItem: Operation = async (req, deps) =>
    (await writes()).putLinkItem(ctxOf(req, deps), at(req), pathParam(req, 'link'), pathParam(req, 'linkKey'), req.body);
  return { get, replace, remove, getLink, postLink, deleteLinkItem, putLink, putLinkItem };
}

export interface ObjectOperations {
  /** Every generic collection row: list, create, get, replace, remove, getLink, postLink, deleteLinkItem, putLink, putLinkItem. */
  readonly collection: Operations;
  /** `GET /api` and the folder-level rows (`/api/f/<key>` and its links). */
  readonly folder: Operations;
  /** `/api/f/<folder>/people/bycard`: the people family's own row. */
  readonly people: Operations;
  /** `/api/f/<folder>/peripherals/<key>` and its links (read only). */
  readonly peripheral: Operations;
  /** `POST /api/f/<instance>/users/<key>/revokesessions`: the folders family's users row. */
  readonly users: Operations;
}

/** The object operations, with a family's hooks. */
export function objectOperations(hooks: ObjectHooks = NO_HOOKS): ObjectOperations {
  const ctxOf: ContextOf = (req, deps) => contextOf(req, deps, hooks);
  const member = operationsAt(memberAt, ctxOf);
  const folder = operationsAt(folderAt, ctxOf);
  const peripheral = operationsAt(peripheralAt, ctxOf);
  return {
    collection: Object.freeze({
      list: async (req, deps) => {
        const ctx = ctxOf(req, deps);
        const paging = parsePaging(req);
        const items = await listObjects(ctx, collectionOf(req), pathParam(req, 'folderKey'), paging);
        return ok(items.map((o) => view(ctx, o)));
      },
      create: async (req, deps) => (await writes()).create(ctxOf(req, deps), collectionOf(req), pathParam(req, 'folderKey'), req.body),
      ...member,
    }),
    folder: Object.freeze({
      currentInstance: async (req, deps) => {
        const ctx = ctxOf(req, deps);
        return ok(view(ctx, await locate(ctx, { kind: 'folder', key: ctx.principal.instanceKey })));
      },
      getFolder: folder.get,
      replaceFolder: folder.replace,
      removeFolder: folder.remove,
      getFolderLink: folder.getLink,
      postFolderLink: folder.postLink,
      deleteFolderLinkItem: folder.deleteLinkItem,
    }),
    people: Object.freeze({
      personByCard: async (req, deps) => {
        const ctx = ctxOf(req, deps);
        const facility = queryValue(req, 'facilityCode') ?? queryValue(req, 'facilitycode');
        const number = queryValue(req, 'cardNumber') ?? queryValue(req, 'cardnumber') ?? '';
        return ok(view(ctx, await personByCard(ctx, pathParam(req, 'folderKey'), number, facility === '' ? undefined : facility)));
      },
    }),
    peripheral: Object.freeze({
      getPeripheral: peripheral.get,
      getPeripheralLink: peripheral.getLink,
    }),
    users: Object.freeze({
      revokeSessions: async (req, deps) => (await writes()).revokeSessions(ctxOf(req, deps), memberAt(req)),
    }),
  };
}
