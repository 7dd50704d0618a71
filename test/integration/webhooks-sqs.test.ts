/**
 * The SQS side of webhook delivery with the real AWS SDK client against a stand-in of the SQS
 * JSON protocol on 127.0.0.1 (AWS itself is out of reach here): jobs go out 10 at a time and under
 * 256 KB a batch, with DelaySeconds capped at 15 minutes; a refused entry is sent again; an early
 * job is hidden again with ChangeMessageVisibility, capped at 12 hours.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryJob } from '#shared/live/webhooks/queue.ts';
import { createSqsQueue } from '#shared/live/webhooks/sqs-queue.ts';

interface Call {
  readonly target: string;
  readonly body: any;
}

let server: Server;
let endpoint: string;
const calls: Call[] = [];
/** Entry ids refused once, then accepted. */
const refuseOnce = new Set<string>();

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      calls.push({ target, body });
      res.setHeader('content-type', 'application/x-amz-json-1.0');
      if (target.endsWith('.SendMessageBatch')) {
        const entries = body.Entries as Array<{ Id: string; MessageBody: string }>;
        const failed = entries.filter((e) => refuseOnce.delete(JSON.parse(e.MessageBody).eventKey));
        res.end(
          JSON.stringify({
            Successful: entries.filter((e) => !failed.includes(e)).map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: createHash('md5').update(e.MessageBody).digest('hex') })),
            Failed: failed.map((e) => ({ Id: e.Id, SenderFault: false, Code: 'InternalError' })),
          }),
        );
      } else {
        res.end('{}');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

const NOW = 1_800_000_000_000;
const job = (n: number, over: Partial<DeliveryJob> = {}): DeliveryJob => ({
  webhookKey: 'aaaaaaaaaaaaaaaaaaaaaaa1',
  instanceKey: 'aaaaaaaaaaaaaaaaaaaaaaa2',
  eventKey: `e${n}`,
  messageId: `msg_e${n}`,
  type: 'event',
  timestamp: new Date(NOW).toISOString(),
  data: { Key: `e${n}` },
  attempt: 1,
  notBefore: NOW,
  ...over,
});

describe('the SQS webhook queue', () => {
  it('sends 10 jobs a batch, under 256 KB a batch, with DelaySeconds capped at 900', async () => {
    calls.length = 0;
    const q = createSqsQueue({ queueUrl: `${endpoint}/000000000000/jobs`, region: 'us-east-1', endpoint, now: () => NOW });
    const big = { Key: 'x', Blob: 'x'.repeat(100 * 1024) };
    await q.send([
      ...Array.from({ length: 12 }, (_, i) => job(i, { notBefore: NOW + i * 1000 })),
      job(100, { data: big }),
      job(101, { data: big }),
      job(102, { data: big }),
      job(103, { notBefore: NOW + 3 * 3600_000 }),
    ]);
    const batches = calls.filter((c) => c.target.endsWith('.SendMessageBatch')).map((c) => c.body.Entries as Array<{ MessageBody: string; DelaySeconds: number; MessageGroupId: string }>);
    // 12 small jobs and three of 100 KB: 10, then 2 small with 2 large (a third would pass 256 KB), then the rest.
    expect(batches.map((b) => b.length)).toEqual([10, 4, 2]);
    for (const b of batches) expect(b.reduce((s, e) => s + Buffer.byteLength(e.MessageBody), 0)).toBeLessThanOrEqual(256 * 1024);
    const all = batches.flat().map((e) => ({ job: JSON.parse(e.MessageBody) as DeliveryJob, delay: e.DelaySeconds, group: e.MessageGroupId }));
    // Each message's fair-queue tenant is its subscription's instance.
    expect(all.every((e) => e.group === e.job.instanceKey)).toBe(true);
    expect(all.map((e) => e.job.eventKey)).toEqual([...Array.from({ length: 12 }, (_, i) => `e${i}`), 'e100', 'e101', 'e102', 'e103']);
    expect(all.find((e) => e.job.eventKey === 'e5')!.delay).toBe(5);
    expect(all.find((e) => e.job.eventKey === 'e103')!.delay).toBe(900);
    expect(calls.every((c) => c.body.QueueUrl === `${endpoint}/000000000000/jobs`)).toBe(true);
  });

  it('sends a refused entry again, and refuses a job larger than a message', async () => {
    calls.length = 0;
    refuseOnce.add('e7');
    const q = createSqsQueue({ queueUrl: `${endpoint}/000000000000/jobs`, region: 'us-east-1', endpoint, now: () => NOW });
    await q.send([job(6), job(7), job(8)]);
    const batches = calls.filter((c) => c.target.endsWith('.SendMessageBatch')).map((c) => (c.body.Entries as Array<{ MessageBody: string }>).map((e) => JSON.parse(e.MessageBody).eventKey));
    expect(batches).toEqual([['e6', 'e7', 'e8'], ['e7']]);
    expect(q.maxJobBytes).toBe(256 * 1024);
    await expect(q.send([job(9, { data: { Blob: 'x'.repeat(300 * 1024) } })])).rejects.toThrow(/larger than an SQS message/);
  });

  it('hides an early job again for the rest of its wait, at most 12 hours', async () => {
    calls.length = 0;
    const q = createSqsQueue({ queueUrl: `${endpoint}/000000000000/jobs`, region: 'us-east-1', endpoint, now: () => NOW });
    await q.defer('receipt-1', 3600.2);
    await q.defer('receipt-2', 5 * 86_400);
    const changes = calls.filter((c) => c.target.endsWith('.ChangeMessageVisibility')).map((c) => [c.body.ReceiptHandle, c.body.VisibilityTimeout]);
    expect(changes).toEqual([
      ['receipt-1', 3601],
      ['receipt-2', 43_200],
    ]);
  });
});
