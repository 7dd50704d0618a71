/**
 * The settings of a webhook subscription from the body a client sends (create and replace):
 * its URL (checked against the address rules of ssrf.ts), its topics in the live feed's form,
 * with the live feed's scope rule (`inScope` in `shared/live/topics.ts`) applied to the
 * subscription's own instance, and its filters. Only the calls that write load it.
 */
import { ApiError, badRequest, forbidden } from '../../errors.ts';
import { isObjectKey } from '../../db/item-keys.ts';
import type { WebhookSettings } from '../../db/webhooks-repo.ts';
import type { Db } from '../../db/client.ts';
import { inScope, parseTopic } from '../topics.ts';
import { typeNameOf } from '../../model/type-tags.ts';
import { pointsAtSelf } from './self-target.ts';
import { urlProblem } from './ssrf.ts';
import { WEBHOOK_TYPE } from './subscriptions.ts';

/** Most topics, app keys or event type keys one subscription may list. */
const MAX_LIST = 100;

const invalid = (message: string) => badRequest('ValidationFailed', message);
const invalidUrl = (message: string): ApiError => badRequest('InvalidUrl', message);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function keyList(body: Record<string, unknown>, field: string): string[] {
  const v = body[field];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.length > MAX_LIST || !v.every((k) => typeof k === 'string' && isObjectKey(k.toLowerCase()))) {
    throw invalid(`${field} must be a list of at most ${MAX_LIST} object keys.`);
  }
  return [...new Set(v.map((k: string) => k.toLowerCase()))];
}

/**
 * The settings a body asks for, validated (URL, topics' shape and scope). `instanceKey` is the
 * instance that holds the subscription; `own` the service's own endpoints (`ownEndpoints` of
 * self-target.ts), which a URL may not name.
 */
export async function settingsFrom(
  db: Db,
  body: unknown,
  instanceKey: string,
  allowLoopback: boolean,
  own: readonly string[],
): Promise<WebhookSettings> {
  if (!isRecord(body)) throw invalid('The body must be a JSON object.');
  const type = typeNameOf(body.$type);
  if (body.$type !== undefined && type !== WEBHOOK_TYPE) throw badRequest('WrongType', `The body must be a ${WEBHOOK_TYPE}.`);
  const name = body.CommonName ?? '';
  if (typeof name !== 'string' || name.length > 256) throw invalid('CommonName must be a string of at most 256 characters.');
  if (typeof body.Url !== 'string' || body.Url.length === 0 || body.Url.length > 2048) throw invalidUrl('Url is required (at most 2048 characters).');
  const problem = urlProblem(body.Url, allowLoopback);
  if (problem) throw invalidUrl(problem);
  if (await pointsAtSelf(body.Url, own)) throw invalidUrl('Url may not name Gatehouse itself.');
  const enabled = body.Enabled ?? true;
  if (typeof enabled !== 'boolean') throw invalid('Enabled must be true or false.');
  const audit = body.IncludeAuditEvents ?? true;
  if (typeof audit !== 'boolean') throw invalid('IncludeAuditEvents must be true or false.');
  const min = body.MinimumPriority ?? null;
  if (min !== null && (typeof min !== 'number' || !Number.isInteger(min) || min < 0)) throw invalid('MinimumPriority must be a whole number, 0 or more.');

  const rawTopics = body.Topics ?? [`/${instanceKey}/$`];
  if (!Array.isArray(rawTopics) || rawTopics.length === 0 || rawTopics.length > MAX_LIST) {
    throw invalid(`Topics must list 1 to ${MAX_LIST} topics.`);
  }
  const topics: string[] = [];
  for (const t of rawTopics) {
    const topic = typeof t === 'string' ? parseTopic(t) : undefined;
    if (!topic) throw badRequest('InvalidTopic', 'A topic is "/<instance_key>/$" or "/<instance_key>/<object_key>".');
    // The live feed's scope rule, for the subscription's instance (itself in the caller's scope).
    if (!(await inScope({ db }, { instanceKey }, topic.instanceKey))) throw forbidden('The topic is outside the scope of the instance.');
    if (!topics.includes(topic.name)) topics.push(topic.name);
  }
  return {
    CommonName: name,
    Url: body.Url,
    Enabled: enabled,
    Topics: topics,
    AppKeys: keyList(body, 'AppKeys'),
    EventTypeKeys: keyList(body, 'EventTypeKeys'),
    MinimumPriority: min as number | null,
    IncludeAuditEvents: audit,
  };
}
