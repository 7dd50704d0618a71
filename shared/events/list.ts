/**
 * The events list (`GET /api/f/<folder_key>/events`): newest `OccurredOn` first, ties by Key
 * (newest first too), filtered by the query parameters (see `list-query.ts`).
 *
 * Reads, never a Scan:
 * - Without object keys, each folder in the listing (the folder; with `includeSubFolders` its
 *   sub-folders; with `spanScope` the child instances, recursively, and their sub-folders too when
 *   both are set) is a timeline on GSI1 (`EV#<folder>`), read newest first with the
 *   `startingOn`/`endingOn` range in the key condition. The timelines are merged (k-way) and read
 *   in bounded pages until `(page + 1) * pageSize` events match or the timelines end.
 * - With `forKeys`, `forAllKeys` or `forPeopleInAccessLevels`, the pointer items of those objects
 *   (`EP#<objectKey>`, the same range in the key condition) are merged instead, so the reads are
 *   O(events of those objects), not O(events of the folders); the matching events are read with
 *   BatchGetItem and kept when they lie in the listed folders.
 *
 * Walking pages: the position after each full page (the timeline sort key of its last event) is
 * kept per execution environment, so page N+1 right after page N is one bounded read from there
 * (and events published meanwhile do not shift it). A page whose position is not known is found
 * by reading from the start.
 *
 * A listing that would read more than {@link MAX_SCANNED} items answers 400 QueryTooBroad
 * (narrow it with startingOn/endingOn): a short page would tell a client the data had ended.
 */
import { ApiError } from '../errors.ts';
import { queryFolderEvents, queryPointers, type EventPointer, type SortRange } from '../db/event-reads.ts';
import { getObjects } from '../db/objects-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { connectionsTo, type Connection } from '../db/relations-repo.ts';
import { SCHEDULED_ACCESS_LEVEL } from '../relations/rules.ts';
import { windowHolds, windowOf } from '../relations/window.ts';
import { requireFolderInScope } from '../objects/tenant-scope.ts';
import { readSteps, type Ctx, type ReadStep } from '../objects/domain-context.ts';
import { TtlCache } from '../ttl-cache.ts';
import { pacer } from '../query/pacer.ts';
import { foldersOf } from './timeline-folders.ts';
import { eventFilter, type EventDocView, type EventListQuery } from './list-query.ts';

export { foldersOf } from './timeline-folders.ts';

/** Items one listing may read before it is refused as too broad. */
const MAX_SCANNED = 50_000;
/** Object keys whose pointers a listing merges; more falls back to the folder timelines. */
const MAX_POINTER_STREAMS = 100;

const tooBroad = (what: string) => new ApiError(400, 'QueryTooBroad', `The events query ${what}: narrow it with startingOn/endingOn or fewer folders.`);

/** Position (timeline sort key) after each page of a listing: 5 minutes, 10 000 entries. */
const positions = new TtlCache<string>(10_000, 5 * 60_000);

interface Entry {
  readonly sk: string;
  readonly key: string;
  readonly event?: StoredObject;
  readonly pointer?: EventPointer;
}

interface Budget {
  scanned: number;
}

interface Stream {
  buf: Entry[];
  pos: number;
  started: boolean;
  next: Record<string, unknown> | undefined;
  limit: number;
  read(limit: number, start: Record<string, unknown> | undefined): Promise<{ entries: Entry[]; next: Record<string, unknown> | undefined; scanned: number }>;
}

const pending = (s: Stream) => s.pos >= s.buf.length && (!s.started || s.next !== undefined);

async function refill(s: Stream, budget: Budget): Promise<void> {
  const limit = s.started ? Math.min(1000, s.limit * 2) : s.limit;
  const out = await s.read(limit, s.next);
  s.started = true;
  s.limit = limit;
  s.buf = out.entries;
  s.pos = 0;
  s.next = out.next;
  budget.scanned += out.scanned;
  if (budget.scanned > MAX_SCANNED) throw tooBroad(`would read more than ${MAX_SCANNED} events`);
}

/** The next entry of the merged streams (greatest sort key first), or undefined at the end. */
async function take(streams: readonly Stream[], budget: Budget): Promise<Entry | undefined> {
  for (let waiting = streams.filter(pending); waiting.length > 0; waiting = streams.filter(pending)) {
    await Promise.all(waiting.map((s) => refill(s, budget)));
  }
  let best: Stream | undefined;
  for (const s of streams) {
    if (s.pos < s.buf.length && (!best || s.buf[s.pos]!.sk > best.buf[best.pos]!.sk)) best = s;
  }
  return best ? best.buf[best.pos++] : undefined;
}

/** A stream not read yet, reading its pages with `read`. */
const newStream = (limit: number, read: Stream['read']): Stream => ({ buf: [], pos: 0, started: false, next: undefined, limit, read });

function folderStream(ctx: Ctx, folder: string, range: SortRange, limit: number, nowEpoch: number, step: ReadStep): Stream {
  return newStream(limit, async (n, start) => {
    await step();
    const page = await queryFolderEvents(ctx.db, folder, range, n, start, nowEpoch);
    return { entries: page.items.map((event, i) => ({ sk: page.sortKeys[i]!, key: event.key, event })), next: page.next, scanned: page.scanned };
  });
}

function pointerStream(ctx: Ctx, objectKey: string, range: SortRange, limit: number, nowEpoch: number, step: ReadStep): Stream {
  return newStream(limit, async (n, start) => {
    await step();
    const page = await queryPointers(ctx.db, objectKey, range, n, start, nowEpoch);
    return { entries: page.items.map((pointer) => ({ sk: pointer.SK, key: pointer.EventKey, pointer })), next: page.next, scanned: page.scanned };
  });
}

/**
 * People connected to any of the access levels: by AccessLevel, or by a ScheduledAccessLevel whose
 * window holds the time of the call (a level that has not started or has ended does not count).
 */
async function peopleIn(ctx: Ctx, accessLevels: readonly string[], step: ReadStep): Promise<Set<string>> {
  const lists = await Promise.all(
    accessLevels.map(async (a) => {
      await step();
      return connectionsTo(ctx.db, a);
    }),
  );
  const counts = (c: Connection) =>
    c.relation === 'AccessLevel' || (c.relation === SCHEDULED_ACCESS_LEVEL && windowHolds(windowOf(c), ctx.now));
  return new Set(lists.flat().filter(counts).map((c) => c.from));
}

const positionKey = (ctx: Ctx, folderKey: string, q: EventListQuery, page: number) =>
  [ctx.db.tableName, folderKey, q.signature, q.pageSize, page].join('\u0000');

/** One page of events (stored objects, newest first). */
export async function listEvents(ctx: Ctx, folderKey: string, q: EventListQuery): Promise<StoredObject[]> {
  await requireFolderInScope(ctx, folderKey);
  const from = q.startingOn?.toISOString();
  const end = q.endingOn?.toISOString();
  if (from !== undefined && end !== undefined && from >= end) return [];

  // The listing's first read goes out at once; the others wait for the caller's verdict while it
  // is not in (a new environment's first call: ApiRequest.verdict).
  const step = readSteps(ctx);
  const [folders, people] = await Promise.all([
    foldersOf(ctx, folderKey, q, step),
    q.forPeopleInAccessLevels.length > 0 ? peopleIn(ctx, q.forPeopleInAccessLevels, step) : Promise.resolve(undefined),
  ]);
  if (people && people.size === 0) return [];
  const inListing = new Set(folders);

  // Where this page starts: after the last event of the page before, when that is known.
  const known = q.page > 0 ? positions.get(positionKey(ctx, folderKey, q, q.page)) : undefined;
  const firstPage = known !== undefined ? q.page : 0;
  const to = known !== undefined && (end === undefined || known < end) ? known : end;
  const range: SortRange = { ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) };
  const needed = (q.page - firstPage + 1) * q.pageSize;

  const objectKeys = q.forAllKeys.length > 0 ? [q.forAllKeys[0]!] : q.forKeys.length > 0 ? [...new Set(q.forKeys)] : people ? [...people] : [];
  const byPointers = objectKeys.length > 0 && objectKeys.length <= MAX_POINTER_STREAMS;
  const sources = byPointers ? objectKeys : folders;
  const first = sources.length === 1 ? Math.min(1000, needed) : Math.min(1000, Math.max(10, Math.ceil((2 * needed) / sources.length)));
  const nowEpoch = Math.floor(ctx.now.getTime() / 1000);
  const streams = sources.map((k) => (byPointers ? pointerStream : folderStream)(ctx, k, range, first, nowEpoch, step));

  const keep = eventFilter(q, people);
  const prefilter = (p: EventPointer) =>
    (p.Folder === undefined || inListing.has(p.Folder)) &&
    !(q.priorityThreshold > 0 && (p.Priority ?? 0) < q.priorityThreshold) &&
    !(q.sinceKey && !(p.EventKey > q.sinceKey));

  const budget: Budget = { scanned: 0 };
  const pace = pacer('events listing');
  const matches: Entry[] = [];
  let lastSk: string | undefined;
  let ended = false;
  while (matches.length < needed && !ended) {
    // Pull a batch of candidates in order, read the events pointers name, then filter in order.
    const batch: Entry[] = [];
    const want = Math.min(100, needed - matches.length);
    while (batch.length < want) {
      const e = await take(streams, budget);
      if (!e) {
        ended = true;
        break;
      }
      if (e.sk === lastSk) continue; // the same event through another object's pointer
      lastSk = e.sk;
      if (e.pointer && !prefilter(e.pointer)) continue;
      batch.push(e);
    }
    const missing = batch.filter((e) => !e.event).map((e) => e.key);
    if (missing.length > 0) await step();
    const fetched = missing.length > 0 ? new Map((await getObjects(ctx.db, missing)).map((o) => [o.key, o])) : undefined;
    budget.scanned += missing.length;
    for (const e of batch) {
      const event = e.event ?? fetched?.get(e.key);
      if (!event || event.collection !== 'events' || !inListing.has(event.folder)) continue;
      const wait = pace();
      if (wait) await wait;
      if (!keep(event.doc as EventDocView)) continue;
      matches.push({ ...e, event });
      if (matches.length % q.pageSize === 0) {
        positions.set(positionKey(ctx, folderKey, q, firstPage + matches.length / q.pageSize), e.sk);
      }
      if (matches.length >= needed) break;
    }
  }
  const skip = (q.page - firstPage) * q.pageSize;
  return matches.slice(skip, skip + q.pageSize).map((e) => e.event!);
}

