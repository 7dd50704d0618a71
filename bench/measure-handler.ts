/**
 * handlerOverhead: a warm GET person through the real people handler (JWT verify, routing,
 * validation, serialization), against the bare GetItem of the same item with the same SDK client
 * (strongly consistent, as the handler reads),
 * alternated call by call so machine load hits both alike.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { OBJECT_SK, objectPk } from '#shared/db/item-keys.ts';
import { httpEvent, lambdaContext } from '../test/support/api.ts';
import { recorded, type Harness } from './harness.ts';
import type { HandlerOverhead, Measured } from './results.ts';
import { interleaved } from './sampling.ts';
import { ratioOf, summarize, within, orNull } from './stats.ts';

const HANDLER_OVERHEAD_GOAL = { max: 1.25 };

export interface HandlerOverheadInput {
  readonly h: Harness;
  /** Href of the person read. */
  readonly personHref: string;
  readonly personKey: string;
  readonly samples: number;
  readonly measured: () => Measured;
}

export async function measureHandlerOverhead(input: HandlerOverheadInput): Promise<HandlerOverhead> {
  const { h, personHref, personKey, samples } = input;
  const token = h.tenant.tokens.Operator;
  const handler = await h.handler('people');
  // The same request the handler makes (a strongly consistent GetItem), so the ratio is the pipeline's.
  const get = new GetCommand({ TableName: h.db.tableName, Key: { PK: objectPk(personKey), SK: OBJECT_SK }, ConsistentRead: true });
  const bare = async () => {
    const out = await h.db.doc.send(get);
    if (!out.Item) throw new Error('bare GetItem found nothing');
  };
  // Events are built before the clock starts: API Gateway builds them, not the function.
  const events = Array.from({ length: samples + 40 }, () => httpEvent('GET', personHref, { token }));
  const ctx = lambdaContext();
  let n = 0;
  const viaHandler = async () => {
    const res = await handler(events[n++]!, ctx);
    if (res.statusCode !== 200) throw new Error(`GET person answered ${res.statusCode}: ${res.body}`);
  };
  // Warm: modules, JIT, the status cache (30 s) and the SDK's connection.
  for (let i = 0; i < 20; i++) {
    await viaHandler();
    await bare();
  }
  const one = await recorded(h, viaHandler);
  const { a, b } = await interleaved(samples, viaHandler, bare);
  const hs = summarize(a);
  const bs = summarize(b);
  const ratio = ratioOf(hs.p50, bs.p50);
  const commands = one.calls.map((c) => c.command);
  return {
    unit: 'ms',
    p50Ms: orNull(hs.p50),
    handler: hs,
    bareGetItem: bs,
    commandsPerCall: commands,
    floor: orNull(bs.p50),
    ratio: orNull(ratio),
    goal: 'ratio <= 1.25 (p50 of GET person through the real pipeline / p50 of the bare GetItem, same client, same run)',
    meetsGoal: within(ratio, HANDLER_OVERHEAD_GOAL),
    measured: input.measured(),
  };
}
