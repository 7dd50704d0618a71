/**
 * Publishing (`POST /api/f/<instance_key>/eventmessagesink`): an EventMessagePosting becomes an
 * EventMessageData of the app and event type it names, stored with one pointer per related
 * object (see `putEvent`), or, for a NonLogging event type, handed to the live feed only.
 *
 * Cost: a warm publish (sink, app, event type and related objects resolved within the last
 * seconds, see `resolve.ts`) is exactly one DynamoDB request: the BatchWriteItem of the event and
 * one pointer item per related object (an event without related objects, or of a NonLogging
 * type: one PutItem).
 */
import { putEvent, putLiveEvent, type EventWrite } from '../db/events-repo.ts';
import { isObjectKey } from '../db/keys.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { validationFailed } from '../errors.ts';
import { newKey, placeIn, type Placement } from '../model/placement.ts';
import { requireRole } from '../objects/access.ts';
import { verdictIn, type Ctx } from '../objects/context.ts';
import { checkDocSize, checkLimits, isPlainObject, normalizeTypes } from '../objects/validate.ts';
import { monikersOf } from './monikers.ts';
import { checkPosting, fillTemplate, withEventData, type CheckedPosting, type Posting } from './posting.ts';
import { EVENT_DATA_TYPE, eventHref, storedLinks } from './render.ts';
import { resolvePosting } from './resolve.ts';

/** Everything an EventMessageData is made of. */
export interface NewEvent {
  readonly key: string;
  readonly placement: Placement;
  readonly appKey: string;
  readonly eventTypeKey: string;
  /** The event type's moniker, as the posting named it (Namespace filled from the type). */
  readonly eventTypeMoniker: { readonly Namespace: string; readonly Nickname: string };
  readonly occurredOn: Date;
  readonly publishedOn: Date;
  readonly priority: number;
  readonly requiresAcknowledgement: boolean;
  readonly messageLong: string | null;
  readonly messageShort: string | null;
  /** Stored ObjectLinkItems (bare `$type`). */
  readonly objectLinks: readonly Record<string, unknown>[];
  /**
   * The related keys that get a pointer item (a posting's: those of existing objects, see
   * `resolvePosting`); without it, every object key of `objectLinks`.
   */
  readonly pointerKeys?: ReadonlySet<string>;
  readonly eventDataBsonBase64: string | null;
  readonly clientDeviceId?: string | null;
  readonly metadata?: readonly unknown[];
  readonly monikers?: readonly unknown[];
  readonly tags?: readonly string[];
  /** GATEHOUSE_EVENT_RETENTION_DAYS. */
  readonly retentionDays: number;
}

/** The stored event (every EventMessageData field, in the spec's order) and its pointers. */
export function eventWrite(e: NewEvent): EventWrite {
  const occurredOn = e.occurredOn.toISOString();
  const publishedOn = e.publishedOn.toISOString();
  const doc: Record<string, unknown> = {
    $type: EVENT_DATA_TYPE,
    AlarmAcknowledgements: [],
    AppKey: e.appKey,
    ClientDeviceId: e.clientDeviceId ?? null,
    EventDataBsonBase64: e.eventDataBsonBase64,
    EventTypeKey: e.eventTypeKey,
    EventTypeMoniker: { $type: 'MonikerItem', Namespace: e.eventTypeMoniker.Namespace, Nickname: e.eventTypeMoniker.Nickname },
    Href: eventHref(e.placement.folder, e.key),
    InFolderKey: e.placement.folder,
    Key: e.key,
    Links: storedLinks(),
    MessageLong: e.messageLong,
    MessageShort: e.messageShort,
    Metadata: [...(e.metadata ?? [])],
    Monikers: [...(e.monikers ?? [])],
    ObjectLinks: [...e.objectLinks],
    OccurredOn: occurredOn,
    Priority: e.priority,
    PublishedOn: publishedOn,
    RequiresAcknowledgement: e.requiresAcknowledgement,
    Tags: [...(e.tags ?? [])],
  };
  const event: StoredObject = { key: e.key, collection: 'events', type: EVENT_DATA_TYPE, ...e.placement, version: 1, doc };
  const relatedKeys = e.objectLinks
    .map((l) => (typeof l.LinkedObjectKey === 'string' ? l.LinkedObjectKey.toLowerCase() : ''))
    .filter((k) => isObjectKey(k) && (!e.pointerKeys || e.pointerKeys.has(k)));
  return {
    event,
    occurredOn,
    relatedKeys,
    summary: {
      EventKey: e.key,
      EventTypeKey: e.eventTypeKey,
      AppKey: e.appKey,
      OccurredOn: occurredOn,
      PublishedOn: publishedOn,
      Priority: e.priority,
      MessageShort: e.messageShort,
    },
    expiresAt: Math.floor(e.publishedOn.getTime() / 1000) + e.retentionDays * 86_400,
  };
}

/** The optional EventMessageData fields a posting may carry (ClientDeviceId, Metadata, Monikers, Tags). */
function optionalFields(p: CheckedPosting): Pick<NewEvent, 'clientDeviceId' | 'metadata' | 'monikers' | 'tags'> {
  const { ClientDeviceId, Metadata, Monikers, Tags } = p.extra;
  checkLimits({ Metadata, Monikers, Tags, RelatedObjects: p.relatedObjects });
  if (ClientDeviceId !== undefined && ClientDeviceId !== null && (typeof ClientDeviceId !== 'string' || ClientDeviceId.length > 256)) {
    throw validationFailed('ClientDeviceId must be a string of at most 256 characters.');
  }
  const objects = (field: string, v: unknown, typeName: string): unknown[] => {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || !v.every(isPlainObject)) throw validationFailed(`${field} must be an array of ${typeName}.`);
    return (normalizeTypes(v) as Record<string, unknown>[]).map((x) => (x.$type === undefined ? { $type: typeName, ...x } : x));
  };
  if (Tags !== undefined && Tags !== null && (!Array.isArray(Tags) || !Tags.every((t) => typeof t === 'string'))) {
    throw validationFailed('Tags must be an array of strings.');
  }
  return {
    clientDeviceId: (ClientDeviceId as string | undefined) ?? null,
    metadata: objects('Metadata', Metadata, 'MetadataItem'),
    monikers: objects('Monikers', Monikers, 'MonikerItem'),
    tags: (Tags as string[] | undefined) ?? [],
  };
}

/** The type's own moniker the posting named (a posting may send the Nickname alone). */
function monikerOf(typeDoc: Record<string, unknown>, sent: CheckedPosting['eventTypeMoniker']): { Namespace: string; Nickname: string } {
  const own = monikersOf(typeDoc).find((m) => m.Nickname === sent.Nickname && (sent.Namespace === '' || m.Namespace === sent.Namespace));
  return own ?? sent;
}

/** What a command does once its event is stored, and the event data stored for it (undefined: as posted). */
export interface CommandHookResult {
  readonly eventData?: string | null;
  readonly after: (event: StoredObject) => Promise<void>;
}

/**
 * What a command does beside its posting (shared/access/commands.ts: the card read of the
 * built-in `MercuryCommands` app): called once the posting is resolved and the caller accepted,
 * before anything is written. It throws to refuse the posting (nothing written), or returns what
 * to do once the command's event is stored (undefined: the posting is an ordinary event).
 */
export type CommandHook = (
  ctx: Ctx,
  command: { readonly sink: StoredObject; readonly app: StoredObject; readonly type: StoredObject; readonly posting: Posting; readonly retentionDays: number },
) => Promise<CommandHookResult | undefined>;

export interface Published {
  readonly event: StoredObject;
  /** True for a NonLogging event type: delivered live, not stored. */
  readonly live: boolean;
}

/** Publishes a posting to the sink of `folderKey`. */
export async function publish(ctx: Ctx, retentionDays: number, folderKey: string, body: unknown, commands?: CommandHook): Promise<Published> {
  requireRole(ctx, 'Operator', 'publish events');
  const checked = checkPosting(body, ctx.now);
  const extra = optionalFields(checked);
  // What the posting names is read from here, before the event data is decoded: on a new
  // environment's first call these reads join the caller's token and status checks (one request;
  // Route.readsFirst). resolvePosting waits for the caller's verdict before any later read.
  const resolving = resolvePosting(ctx, folderKey, checked);
  resolving.catch(() => {}); // awaited below, unless the event data is refused first
  const posting = await withEventData(checked);
  const { sink, app, type: resolved, links, pointerKeys } = await resolving;
  // Nothing is written for a caller the checks refuse (the pipeline then answers their error).
  await verdictIn(ctx);
  const { type, requiresAck } = resolved;
  const command = commands ? await commands(ctx, { sink, app, type, posting, retentionDays }) : undefined;
  const t = type.doc;
  const w = eventWrite({
    key: newKey(),
    placement: placeIn(sink),
    appKey: app.key,
    eventTypeKey: type.key,
    eventTypeMoniker: monikerOf(t, posting.eventTypeMoniker),
    occurredOn: posting.occurredOn,
    publishedOn: ctx.now,
    priority: typeof t.Priority === 'number' ? t.Priority : 0,
    requiresAcknowledgement: requiresAck,
    messageLong: fillTemplate(t.MessageTemplateLong, posting.eventData, posting.relatedObjects),
    messageShort: fillTemplate(t.MessageTemplateShort, posting.eventData, posting.relatedObjects),
    objectLinks: links,
    pointerKeys,
    eventDataBsonBase64: command?.eventData !== undefined ? command.eventData : posting.eventDataBsonBase64,
    ...extra,
    retentionDays,
  });
  // The filled templates and the event data can pass what one item holds: a 400 as for an
  // object, before anything is written (DynamoDB would refuse the write: a 500).
  checkDocSize(w.event.doc);
  if (t.NonLogging === true) {
    await putLiveEvent(ctx.db, w, Math.floor(ctx.now.getTime() / 1000));
    return { event: w.event, live: true };
  }
  await putEvent(ctx.db, w);
  if (command) await command.after(w.event);
  return { event: w.event, live: false };
}
