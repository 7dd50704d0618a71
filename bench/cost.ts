/**
 * The cost model: dollars per million calls of each API operation, from the measured figures
 * (duration, DynamoDB capacity) and list prices. Pure arithmetic and Markdown, unit-tested
 * (test/unit/bench-cost.test.ts); `docs/cost.md` is written from it by `npm run bench`.
 */

import {
  DYNAMODB_PER_MILLION_READ_REQUEST_UNITS,
  DYNAMODB_PER_MILLION_WRITE_REQUEST_UNITS,
  HTTP_API_PER_MILLION_REQUESTS,
  IOT_MESSAGE_INCREMENT_BYTES,
  IOT_PER_MILLION_CONNECTION_MINUTES,
  IOT_PER_MILLION_MESSAGES,
  LAMBDA_ARM64_PER_GB_SECOND,
  LAMBDA_PER_MILLION_REQUESTS,
  PRICES_AS_OF,
  PRICES_REGION,
  SQS_PER_MILLION_REQUESTS,
  WEBSOCKET_MESSAGE_INCREMENT_BYTES,
  WEBSOCKET_PER_MILLION_CONNECTION_MINUTES,
  WEBSOCKET_PER_MILLION_MESSAGES,
} from '../infra/prices.ts';
import { LAZY_IMPORT_MIN_BYTES, type LazyImportFigures } from './results.ts';

/** The subscriber counts docs/cost.md prices an event at, for both live protocols. */
export const SUBSCRIBER_COUNTS = [1, 10, 1000] as const;

export interface OperationFigures {
  readonly name: string;
  /** The function serving it. */
  readonly family: string;
  readonly memoryMb: number;
  /** Measured duration of one call (p50, in-process, warm), ms; null when not measured. */
  readonly durationMs: number | null;
  /** Measured DynamoDB read and write capacity units of one call. */
  readonly rcu: number | null;
  readonly wcu: number | null;
}

export interface OperationCost {
  readonly name: string;
  readonly family: string;
  readonly memoryMb: number;
  readonly billedMs: number | null;
  readonly httpApi: number;
  readonly lambdaRequests: number;
  readonly lambdaDuration: number | null;
  readonly dynamoReads: number | null;
  readonly dynamoWrites: number | null;
  /** Dollars per million calls; null when a figure it needs was not measured. */
  readonly total: number | null;
}

/** Lambda bills duration rounded up to the millisecond (at least 1 ms). */
export const billedMs = (ms: number): number => Math.max(1, Math.ceil(ms));

/** Dollars per million calls of an operation behind the HTTP API. */
export function operationCost(f: OperationFigures): OperationCost {
  const billed = f.durationMs === null || !Number.isFinite(f.durationMs) ? null : billedMs(f.durationMs);
  const lambdaDuration = billed === null ? null : (f.memoryMb / 1024) * (billed / 1000) * 1e6 * LAMBDA_ARM64_PER_GB_SECOND;
  const dynamoReads = f.rcu === null ? null : f.rcu * DYNAMODB_PER_MILLION_READ_REQUEST_UNITS;
  const dynamoWrites = f.wcu === null ? null : f.wcu * DYNAMODB_PER_MILLION_WRITE_REQUEST_UNITS;
  const parts = [HTTP_API_PER_MILLION_REQUESTS, LAMBDA_PER_MILLION_REQUESTS, lambdaDuration, dynamoReads, dynamoWrites];
  const total = parts.some((p) => p === null) ? null : (parts as number[]).reduce((s, p) => s + p, 0);
  return {
    name: f.name,
    family: f.family,
    memoryMb: f.memoryMb,
    billedMs: billed,
    httpApi: HTTP_API_PER_MILLION_REQUESTS,
    lambdaRequests: LAMBDA_PER_MILLION_REQUESTS,
    lambdaDuration,
    dynamoReads,
    dynamoWrites,
    total,
  };
}

/** WebSocket messages one delivery is billed as. */
export const messagesFor = (bytes: number): number => Math.max(1, Math.ceil(bytes / WEBSOCKET_MESSAGE_INCREMENT_BYTES));

/** Dollars per million events delivered to one subscriber (the PostToConnection messages). */
export function fanoutCostPerSubscriber(messageBytes: number): number {
  return messagesFor(messageBytes) * WEBSOCKET_PER_MILLION_MESSAGES;
}

/** Dollars for one subscriber connected for a 30-day month (connection minutes only). */
export function connectionMonthCost(perMillionMinutes: number = WEBSOCKET_PER_MILLION_CONNECTION_MINUTES): number {
  return ((30 * 24 * 60) / 1e6) * perMillionMinutes;
}

/** IoT Core messages one MQTT message (a publish, or one delivery) is billed as. */
export const iotMessagesFor = (bytes: number): number => Math.max(1, Math.ceil(bytes / IOT_MESSAGE_INCREMENT_BYTES));

/**
 * Dollars per million events on the JSON WebSocket with `subscribers` subscribers of the event's
 * topic: one PostToConnection message per subscriber.
 */
export function websocketCostPerMillionEvents(messageBytes: number, subscribers: number): number {
  return subscribers * fanoutCostPerSubscriber(messageBytes);
}

/**
 * Dollars per million events over MQTT with `subscribers` subscribers of the event's topic: the
 * fan-out's one publish (inbound message) plus one outbound message per subscriber, each billed
 * per 5 KB.
 */
export function mqttCostPerMillionEvents(messageBytes: number, subscribers: number): number {
  return (1 + subscribers) * iotMessagesFor(messageBytes) * IOT_PER_MILLION_MESSAGES;
}

/** What one webhook delivery attempt is priced at. */
export interface WebhookAttemptInput {
  /** How long the receiver takes to answer (the sender waits, at most 10 s). */
  readonly receiverMs: number;
  /** Jobs per SQS batch (and so per sender invocation): 1 when deliveries trickle in, up to 10 when busy. */
  readonly batchSize: number;
  /** The webhooks function's memory. */
  readonly memoryMb: number;
}

/**
 * The sender's own store and queue round trips per attempt besides the receiver (GetItem of the
 * subscription, PutItem of the attempt record): an estimate, as DynamoDB Local's timings are not AWS's.
 */
export const WEBHOOK_STORE_MS = 20;

export interface WebhookAttemptCost {
  readonly sqs: number;
  readonly lambdaRequests: number;
  readonly lambdaDuration: number;
  readonly dynamoReads: number;
  readonly dynamoWrites: number;
  readonly total: number;
}

/**
 * Dollars per million webhook delivery attempts in AWS. SQS: the fan-out's SendMessageBatch, the
 * event source's ReceiveMessage and DeleteMessageBatch, each shared by the batch. Lambda: one
 * invocation per batch, whose jobs run at once, so it lasts about one receiver answer plus the
 * store round trips, shared by the batch. DynamoDB: one strongly consistent GetItem of the
 * subscription (1 read unit), which the sender reuses for a second, so a busy batch shares one
 * (1 / batch size per attempt), and one attempt record (1 write unit, under 1 KB); LastDeliveryOn is
 * written at most once a minute per subscription (left out). A retry adds one SendMessage (not
 * batched) and, for steps longer than 15 minutes, a receive and a ChangeMessageVisibility per 12 hours.
 */
export function webhookAttemptCost(i: WebhookAttemptInput): WebhookAttemptCost {
  const sqs = (3 / i.batchSize) * SQS_PER_MILLION_REQUESTS;
  const lambdaRequests = LAMBDA_PER_MILLION_REQUESTS / i.batchSize;
  const lambdaDuration = ((i.memoryMb / 1024) * (billedMs(i.receiverMs + WEBHOOK_STORE_MS) / 1000) * 1e6 * LAMBDA_ARM64_PER_GB_SECOND) / i.batchSize;
  const dynamoReads = DYNAMODB_PER_MILLION_READ_REQUEST_UNITS / i.batchSize;
  const dynamoWrites = 1 * DYNAMODB_PER_MILLION_WRITE_REQUEST_UNITS;
  return { sqs, lambdaRequests, lambdaDuration, dynamoReads, dynamoWrites, total: sqs + lambdaRequests + lambdaDuration + dynamoReads + dynamoWrites };
}

/** The receiver answer times and batch sizes docs/cost.md prices a webhook delivery at. */
const WEBHOOK_RECEIVER_MS = [50, 250, 1000, 10_000] as const;
const WEBHOOK_BATCH_SIZES = [1, 10] as const;

/** `$1.2345` with enough digits to tell small parts apart. */
export function dollars(x: number | null): string {
  if (x === null || !Number.isFinite(x)) return 'n/a';
  if (x === 0) return '$0';
  if (x >= 100) return `$${x.toFixed(0)}`;
  if (x >= 1) return `$${x.toFixed(2)}`;
  // Three significant digits, without trailing zeros: $0.2, $0.125, $0.0267.
  return `$${Number(x.toPrecision(3))}`;
}

const num = (x: number | null, digits = 1): string => (x === null || !Number.isFinite(x) ? 'n/a' : String(Math.round(x * 10 ** digits) / 10 ** digits));

export interface CostDocInput {
  readonly generatedAt: string;
  readonly mode: 'quick' | 'full';
  readonly loadavg: readonly number[];
  readonly operations: readonly OperationFigures[];
  /** Mean delivered WebSocket message size, bytes; null when fan-out was not measured. */
  readonly fanoutMessageBytes: number | null;
  /** Mean delivered MQTT payload size (BSON), bytes; null (or absent) when MQTT was not measured. */
  readonly mqttMessageBytes?: number | null;
  /** The webhooks function's memory (MB); absent: webhooks are not priced. */
  readonly webhookMemoryMb?: number;
  /** Measured p50 of a local delivery attempt to a loopback receiver (ms), shown beside the model; null when not measured. */
  readonly webhookAttemptMs?: number | null;
  /** What each `import()` of the functions' code saves (bench/lazy-imports.ts); absent or empty: the section is left out. */
  readonly lazyImports?: readonly LazyImportFigures[];
  readonly notes: readonly string[];
}

/** Bytes as KB with one decimal (1 KB = 1000 bytes, as the bench prints them). */
const kb = (bytes: number): string => `${(bytes / 1000).toFixed(1)} KB`;

/**
 * The section on lazy loading: each `import()` the functions' code keeps, and what it saves the
 * start code of the functions it is in (or the first load of the chunk holding it, where that
 * chunk is itself loaded on first use), measured by building each function with it static.
 */
export function lazyImportsMarkdown(sites: readonly LazyImportFigures[]): string[] {
  if (sites.length === 0) return [];
  const lines = ['## Lazy loading', ''];
  lines.push(
    `Each \`import()\` of the functions' code, and what it saves: every function is built as deployed and again with that one ` +
      'call made a static import (bench/lazy-imports.ts); the saving is the difference in the bytes and files its cold start ' +
      'loads (or, where the module holding the call is itself loaded on first use, in the bytes that first load reads). ' +
      `An \`import()\` is kept only where it saves at least ${kb(LAZY_IMPORT_MIN_BYTES)} of some function, or where making it ` +
      "static would carry a function's start code over the bench's bundle-size goal (the baseline's bytes + 120 KB) that it " +
      'meets with the import lazy, marked "over the goal if static" (issue #35: every goal met before is still met); the ' +
      'cold-start time of each function, lazily loaded parts and all, is the coldStart entry of bench/results/latest.json.',
  );
  lines.push('');
  lines.push('| `import()` | of | saves at start | saves on first load of its module | functions (start bytes saved, files) |');
  lines.push('| --- | --- | ---: | ---: | --- |');
  for (const s of sites) {
    const per = s.savings.map((x) => `${x.family} ${kb(x.startBytes)}${x.withModuleBytes ? ` (first load ${kb(x.withModuleBytes)})` : ''}, ${x.startFiles >= 0 ? '+' : ''}${x.startFiles}${x.breaksBytesGoal ? ', over the goal if static' : ''}`).join('; ');
    lines.push(`| \`${s.file}:${s.line}\` | \`${s.specifier}\` | ${kb(s.maxStartBytes)} | ${kb(s.maxWithModuleBytes)} | ${per || 'in no function'} |`);
  }
  const folded = sites.filter((s) => !s.pays);
  if (folded.length) lines.push('', `Saving less than ${kb(LAZY_IMPORT_MIN_BYTES)} anywhere, to be made static: ${folded.map((s) => `\`${s.file}:${s.line}\``).join(', ')}.`);
  lines.push('');
  return lines;
}

/** The whole of docs/cost.md. */
export function costMarkdown(input: CostDocInput): string {
  const rows = input.operations.map((f) => ({ f, c: operationCost(f) }));
  const lines: string[] = [];
  lines.push('# Cost model');
  lines.push('');
  lines.push(
    `<!-- Generated by \`npm run bench\` (bench/cost.ts) from bench/results/latest.json on ${input.generatedAt}. Do not edit by hand: run the benchmark again. -->`,
  );
  lines.push('');
  lines.push(
    `Dollars per **million calls** of each API operation in one region, at **list prices as of ${PRICES_AS_OF}, ${PRICES_REGION}** ` +
      '(on-demand, no free tier). The prices are named constants in `infra/prices.ts`, written from memory on that date and not ' +
      'fetched: **they must be checked** against the AWS pricing pages before anyone relies on these dollars.',
  );
  lines.push('');
  lines.push(
    `Measured by a ${input.mode} benchmark run (load average ${input.loadavg.join(' / ')} on a shared 2-core machine) against DynamoDB Local: ` +
      'DynamoDB capacity is what DynamoDB Local reports with ReturnConsumedCapacity on every call, except the write units of ' +
      'the person and event writes, which are what AWS bills for the items they wrote (each item\'s started KB on the table ' +
      'and on each index, twice inside a transaction: Local undercounts a transaction of several items); durations are the p50 of ' +
      'the real handler called in-process, warm, on this machine, not in Lambda: DynamoDB round trips in AWS take other ' +
      'times than DynamoDB Local\'s, and CPU-bound work (the scrypt hash of a password grant) runs slower on a Lambda ' +
      'share of a CPU (about 0.6 vCPU at 1024 MB) than on a core here.',
  );
  lines.push('');
  lines.push('| price | value |');
  lines.push('| --- | --- |');
  lines.push(`| HTTP API requests | ${dollars(HTTP_API_PER_MILLION_REQUESTS)} per million |`);
  lines.push(`| Lambda requests | ${dollars(LAMBDA_PER_MILLION_REQUESTS)} per million |`);
  lines.push(`| Lambda arm64 duration | $${LAMBDA_ARM64_PER_GB_SECOND} per GB-second, billed per 1 ms |`);
  lines.push(`| DynamoDB on-demand reads | ${dollars(DYNAMODB_PER_MILLION_READ_REQUEST_UNITS)} per million read request units |`);
  lines.push(`| DynamoDB on-demand writes | ${dollars(DYNAMODB_PER_MILLION_WRITE_REQUEST_UNITS)} per million write request units |`);
  lines.push(`| WebSocket messages | ${dollars(WEBSOCKET_PER_MILLION_MESSAGES)} per million (${WEBSOCKET_MESSAGE_INCREMENT_BYTES / 1024} KB increments) |`);
  lines.push(`| WebSocket connection minutes | ${dollars(WEBSOCKET_PER_MILLION_CONNECTION_MINUTES)} per million |`);
  lines.push(`| IoT Core messages (MQTT) | ${dollars(IOT_PER_MILLION_MESSAGES)} per million (${IOT_MESSAGE_INCREMENT_BYTES / 1024} KB increments; a publish and each delivery count) |`);
  lines.push(`| IoT Core connection minutes (MQTT) | ${dollars(IOT_PER_MILLION_CONNECTION_MINUTES)} per million |`);
  lines.push('');
  lines.push('## Per API operation');
  lines.push('');
  lines.push(
    '| operation | function (memory) | p50 ms (billed) | RCU | WCU | HTTP API | Lambda requests | Lambda duration | DynamoDB reads | DynamoDB writes | **total per million** |',
  );
  lines.push('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const { f, c } of rows) {
    lines.push(
      `| ${f.name} | ${f.family} (${f.memoryMb} MB) | ${num(f.durationMs)} (${c.billedMs ?? 'n/a'}) | ${num(f.rcu, 2)} | ${num(f.wcu, 2)} | ` +
        `${dollars(c.httpApi)} | ${dollars(c.lambdaRequests)} | ${dollars(c.lambdaDuration)} | ${dollars(c.dynamoReads)} | ${dollars(c.dynamoWrites)} | ` +
        `**${dollars(c.total)}** |`,
    );
  }
  lines.push('');
  lines.push(
    'Lambda duration = memory (GB) x billed seconds x the GB-second price; DynamoDB = measured capacity units of one call x the ' +
      'request-unit price (on-demand request units equal the capacity units DynamoDB reports: 0.5 per eventually consistent ' +
      '4 KB read, 1 per 1 KB written, twice that inside a transaction).',
  );
  lines.push('');
  lines.push('## Live events (fan-out)');
  lines.push('');
  if (input.fanoutMessageBytes === null) {
    lines.push('Not measured in this run (see `fanout.note` in bench/results/latest.json).');
  } else {
    const per = fanoutCostPerSubscriber(input.fanoutMessageBytes);
    lines.push(
      `A delivered event message measured ${input.fanoutMessageBytes} bytes, billed as ${messagesFor(input.fanoutMessageBytes)} WebSocket message(s): ` +
        `**${dollars(per)} per million events per subscriber** (on top of the publish itself). A subscriber connected for a 30-day month ` +
        `adds ${dollars(connectionMonthCost())} of connection minutes.`,
    );
    lines.push('');
    lines.push(
      'Not counted per subscriber: the fan-out function\'s invocations and duration and its one subscriber Query per instance per ' +
        'stream batch, which are shared by every event of a batch (batches of up to 100 records); DynamoDB Streams reads by Lambda are free.',
    );
  }
  lines.push('');
  lines.push('## Live events: JSON WebSocket and MQTT, per event');
  lines.push('');
  const mqttBytes = input.mqttMessageBytes ?? null;
  if (input.fanoutMessageBytes === null || mqttBytes === null) {
    lines.push('Not measured in this run (see `fanout.note` and `fanout.mqtt` in bench/results/latest.json).');
  } else {
    lines.push(
      `Messages as measured in the same run: ${input.fanoutMessageBytes} bytes of JSON on the WebSocket (${messagesFor(input.fanoutMessageBytes)} ` +
        `message(s) of 32 KB), ${mqttBytes} bytes of BSON over MQTT (${iotMessagesFor(mqttBytes)} message(s) of 5 KB). Dollars per **million events**, ` +
        'by the number of subscribers of the event\'s topic:',
    );
    lines.push('');
    lines.push('| subscribers | JSON WebSocket (API Gateway) | MQTT (IoT Core) |');
    lines.push('| ---: | ---: | ---: |');
    for (const n of SUBSCRIBER_COUNTS) {
      lines.push(`| ${n} | ${dollars(websocketCostPerMillionEvents(input.fanoutMessageBytes, n))} | ${dollars(mqttCostPerMillionEvents(mqttBytes, n))} |`);
    }
    lines.push('');
    lines.push(
      'The WebSocket pays one PostToConnection per subscriber (and the fan-out function\'s time for each); MQTT pays one publish ' +
        'per topic plus one delivery per subscriber, and the broker does the fanning out. The MQTT publish is paid even when nobody ' +
        'subscribes: an event is published to `/<i>/$` for each instance of its chain and `/<i>/<object>` for each related object ' +
        '(the table above counts one topic). A subscriber connected for a 30-day month costs ' +
        `${dollars(connectionMonthCost())} on the WebSocket, ${dollars(connectionMonthCost(IOT_PER_MILLION_CONNECTION_MINUTES))} on IoT Core ` +
        '(which also runs the custom authorizer on connect and every 5 minutes: about 8 600 Lambda invocations a month).',
    );
  }
  if (input.webhookMemoryMb !== undefined) {
    const mem = input.webhookMemoryMb;
    lines.push('');
    lines.push('## Webhooks, per delivery');
    lines.push('');
    lines.push(
      `One delivery attempt in AWS: an SQS message (SQS ${dollars(SQS_PER_MILLION_REQUESTS)} per million requests), a share of one ` +
        `invocation of the webhooks function (${mem} MB) that waits for the receiver, one read of the subscription (reused for a ` +
        'second, so shared by a busy batch) and one attempt record in the table. Dollars per **million attempts** (a delivery that succeeds at once is one attempt), by how long the ' +
        'receiver takes to answer and how many jobs share an SQS batch (1 when deliveries trickle in, 10 when busy):',
    );
    lines.push('');
    lines.push(`| receiver answers in | batch | SQS | Lambda requests | Lambda duration | DynamoDB reads | DynamoDB writes | **total per million** |`);
    lines.push('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const ms of WEBHOOK_RECEIVER_MS) {
      for (const batchSize of WEBHOOK_BATCH_SIZES) {
        const c = webhookAttemptCost({ receiverMs: ms, batchSize, memoryMb: mem });
        lines.push(
          `| ${ms} ms | ${batchSize} | ${dollars(c.sqs)} | ${dollars(c.lambdaRequests)} | ${dollars(c.lambdaDuration)} | ${dollars(c.dynamoReads)} | ` +
            `${dollars(c.dynamoWrites)} | **${dollars(c.total)}** |`,
        );
      }
    }
    lines.push('');
    lines.push(
      `The sender's own store round trips are estimated at ${WEBHOOK_STORE_MS} ms per attempt` +
        (input.webhookAttemptMs === null || input.webhookAttemptMs === undefined
          ? ' (the local attempt time was not measured in this run).'
          : `; locally, an attempt to a loopback receiver measured p50 ${num(input.webhookAttemptMs)} ms (the POST and its answer).`) +
        ' A retry is another attempt plus one SendMessage; a step longer than 15 minutes adds a receive and a ChangeMessageVisibility ' +
        'per 12 hours of wait. The fan-out also reads each instance\'s subscriptions once per stream batch ' +
        '(one strongly consistent Query), and each attempt record passes through the table\'s stream to the fan-out, which ignores it (a share of a ' +
        'batch of 100 records). The job queue\'s event source polls SQS even when idle (long polling by a few pollers, well under a ' +
        'million requests a month).',
    );
  }
  lines.push('');
  lines.push(...lazyImportsMarkdown(input.lazyImports ?? []));
  lines.push('## Not included');
  lines.push('');
  for (const n of [
    'Free tiers, savings plans and volume tiers (the first tier of each price is used).',
    'CloudWatch Logs ingestion and storage (each function writes one request line per call, plus Lambda\'s own START/END/REPORT lines), and X-Ray traces (tracing is active on every function; sampled).',
    'Cold starts: the init phase is billed when it happens, and it is amortised over the calls an execution environment serves.',
    'DynamoDB storage, point-in-time recovery, and the stream; Secrets Manager reads (once per execution environment); data transfer out.',
    ...input.notes,
  ]) {
    lines.push(`- ${n}`);
  }
  lines.push('');
  return lines.join('\n');
}
