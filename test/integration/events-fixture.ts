/**
 * Shared arrangement of the events integration tests: a test table, the real families in-process,
 * a root tenant, and helpers to make apps, event types and postings through the API.
 */
import { serialize, type Document } from 'bson';
import { expect } from 'vitest';
import { commandsOf, createTestDb, type TestDb } from '../support/db.ts';
import { setupApi, uniqueName } from '../support/tokens.ts';

const NS = 'Gatehouse.Model';
export const tag = (name: string): string => `${NS}.${name}, ${NS}`;

/** Base64 of a BSON document. */
export const bson = (doc: Document): string => Buffer.from(serialize(doc)).toString('base64');

export type Env = Awaited<ReturnType<typeof setupEvents>>;

export async function setupEvents() {
  const t: TestDb = await createTestDb();
  const env = await setupApi(t);
  const root = env.root.instance.key;
  const token = env.root.tokens.Operator;
  const { api } = env;

  /** Creates an app (201) in a folder, with monikers named by `nicknames`. */
  async function app(folder = root, nicknames: string[] = [uniqueName('App')], tok = token): Promise<any> {
    const r = await api.post(`/api/f/${folder}/apps`, {
      token: tok,
      body: { $type: 'AppInfo', CommonName: uniqueName('app'), Monikers: nicknames.map((Nickname) => ({ Namespace: 'Vendor', Nickname })) },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body;
  }

  /** Adds an event type to an app (201). */
  async function eventType(appBody: any, fields: Record<string, unknown> = {}, tok = token): Promise<any> {
    const r = await api.put(`${appBody.Href}/eventtypes`, {
      token: tok,
      body: { $type: tag('EventTypeInfo'), CommonName: uniqueName('type'), Monikers: [{ Namespace: 'Vendor', Nickname: uniqueName('Kind') }], Priority: 5, ...fields },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body;
  }

  /** A posting of an event type (its first moniker) of an app. */
  function posting(appKey: string, type: any, fields: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      $type: tag('EventMessagePosting'),
      OccurredOn: new Date().toISOString(),
      AppKey: appKey,
      EventTypeMoniker: { Namespace: type.Monikers[0].Namespace, Nickname: type.Monikers[0].Nickname },
      RelatedObjects: [],
      EventDataBsonBase64: bson({}),
      ...fields,
    };
  }

  /** Publishes a posting to an instance's sink. */
  function publish(body: unknown, folder = root, tok = token) {
    return api.post(`/api/f/${folder}/eventmessagesink`, { token: tok, body });
  }

  /** Publishes and expects 201; returns the event. */
  async function published(body: unknown, folder = root, tok = token): Promise<any> {
    const r = await publish(body, folder, tok);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body;
  }

  /** Creates an object of a collection (201). */
  async function object(collection: string, typeName: string, fields: Record<string, unknown> = {}, folder = root): Promise<any> {
    const r = await api.post(`/api/f/${folder}/${collection}`, { token, body: { $type: typeName, CommonName: uniqueName(collection), ...fields } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body;
  }

  /** DynamoDB requests made while `fn` runs. */
  const measure = <T>(fn: () => Promise<T>) => commandsOf(t, fn);

  return { t, env, api, root, token, app, eventType, posting, publish, published, object, measure };
}
