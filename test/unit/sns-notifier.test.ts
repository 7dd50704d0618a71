/**
 * The SNS notifier sends a one-time code as one SNS Publish, with the SNS client loaded by the first
 * code (shared/notify/sns-publish.ts): a local server speaking SNS's query protocol stands in for
 * SNS (the SDK's `AWS_ENDPOINT_URL_SNS` points the client at it) and records what it receives.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snsNotifier } from '#shared/notify/sns-notifier.ts';

const TOPIC = 'arn:aws:sns:eu-west-1:000000000000:gatehouse-notify';
const received: URLSearchParams[] = [];
let server: Server;
const saved: Record<string, string | undefined> = {};
const ENV = ['AWS_ENDPOINT_URL_SNS', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'] as const;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      received.push(new URLSearchParams(body));
      res.writeHead(200, { 'content-type': 'text/xml' });
      res.end('<PublishResponse><PublishResult><MessageId>m-1</MessageId></PublishResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></PublishResponse>');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  for (const k of ENV) saved[k] = process.env[k];
  process.env.AWS_ENDPOINT_URL_SNS = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.AWS_ACCESS_KEY_ID = 'test';
  process.env.AWS_SECRET_ACCESS_KEY = 'test';
});

afterAll(async () => {
  for (const k of ENV) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
  await new Promise<void>((r) => server.close(() => r()));
});

describe('snsNotifier', () => {
  it('publishes each one-time code to the topic, with its kind, instance, user and email as attributes', async () => {
    const notifier = snsNotifier(TOPIC, 'eu-west-1');
    await notifier.send({ kind: 'one-time-password', instance: 'Acme', user: 'ada', code: '123456', at: '2026-11-25T12:00:00Z', email: 'ada@example.com' });
    await notifier.send({ kind: 'one-time-password', instance: 'Acme', user: 'bob', code: '654321', at: '2026-11-25T12:00:00Z' });

    expect(received).toHaveLength(2);
    const [first, second] = received as [URLSearchParams, URLSearchParams];
    expect(first.get('Action')).toBe('Publish');
    expect(first.get('TopicArn')).toBe(TOPIC);
    expect(first.get('Message')).toBe('Your one-time code for Acme\\ada is 123456. It is valid for 10 minutes.');
    const attributes = (p: URLSearchParams) => {
      const out: Record<string, string> = {};
      for (let i = 1; p.has(`MessageAttributes.entry.${i}.Name`); i++) {
        out[p.get(`MessageAttributes.entry.${i}.Name`)!] = p.get(`MessageAttributes.entry.${i}.Value.StringValue`)!;
      }
      return out;
    };
    expect(attributes(first)).toEqual({ kind: 'one-time-password', instance: 'Acme', user: 'ada', email: 'ada@example.com' });
    expect(attributes(second)).toEqual({ kind: 'one-time-password', instance: 'Acme', user: 'bob' });
  });
});
