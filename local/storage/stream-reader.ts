/**
 * Reads the table's DynamoDB stream (the local runtime's stand-in for the Lambda event source
 * mapping). It returns records in the shape Lambda delivers them (`DynamoDBRecord`:
 * epoch-seconds `ApproximateCreationDateTime`, base64 binary attributes), so the fan-out handler
 * sees the same event locally and in AWS. Local only: in AWS, Lambda reads the stream.
 */
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type AttributeValue as SdkAttributeValue,
  type _Record as SdkRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { AttributeValue, DynamoDBRecord } from 'aws-lambda';
import type { Config } from '#shared/config.ts';

export interface StreamShard {
  readonly shardId: string;
  readonly parentShardId: string | undefined;
  /** A closed shard has an ending sequence number: it receives no new records. */
  readonly closed: boolean;
}

export type ShardPosition =
  | { readonly type: 'LATEST' | 'TRIM_HORIZON' }
  | { readonly type: 'AFTER_SEQUENCE_NUMBER'; readonly sequenceNumber: string };

export interface RecordPage {
  readonly records: DynamoDBRecord[];
  /** Undefined when the shard is closed and every record has been read. */
  readonly next: string | undefined;
}

/** The iterator can no longer be used (expired, or its records were trimmed): get a new one. */
export class StreamPositionLost extends Error {
  constructor(cause: unknown) {
    super('The stream iterator is no longer valid.', { cause });
    this.name = 'StreamPositionLost';
  }
}

export interface StreamReader {
  /** The table's current stream, or undefined when streams are off. */
  latestStreamArn(): Promise<string | undefined>;
  /** Every shard of the stream (all pages of DescribeStream). */
  shards(streamArn: string): Promise<StreamShard[]>;
  /** An iterator at a position, or undefined when the shard no longer exists. */
  iterator(streamArn: string, shardId: string, position: ShardPosition): Promise<string | undefined>;
  /** One GetRecords call. Throws {@link StreamPositionLost} for an expired or trimmed iterator. */
  records(iterator: string, limit?: number): Promise<RecordPage>;
  destroy(): void;
}

const LOST = new Set(['ExpiredIteratorException', 'TrimmedDataAccessException']);

export function createStreamReader(cfg: Pick<Config, 'tableName' | 'dynamodbEndpoint' | 'region'>): StreamReader {
  const clientConfig = {
    region: cfg.region,
    ...(cfg.dynamodbEndpoint !== undefined
      ? {
          endpoint: cfg.dynamodbEndpoint,
          // DynamoDB Local accepts any credentials; these never leave the machine.
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        }
      : {}),
  };
  const tables = new DynamoDBClient(clientConfig);
  const streams = new DynamoDBStreamsClient(clientConfig);
  let region = cfg.region;

  return {
    async latestStreamArn() {
      const out = await tables.send(new DescribeTableCommand({ TableName: cfg.tableName }));
      const arn = out.Table?.LatestStreamArn;
      // DynamoDB Local names its region in the ARN; Lambda reports that region in awsRegion.
      if (arn) region = arn.split(':')[3] || region;
      return arn;
    },

    async shards(streamArn) {
      const shards: StreamShard[] = [];
      let start: string | undefined;
      do {
        const out = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: start }));
        for (const s of out.StreamDescription?.Shards ?? []) {
          if (!s.ShardId) continue;
          shards.push({
            shardId: s.ShardId,
            parentShardId: s.ParentShardId,
            closed: s.SequenceNumberRange?.EndingSequenceNumber !== undefined,
          });
        }
        start = out.StreamDescription?.LastEvaluatedShardId;
      } while (start);
      return shards;
    },

    async iterator(streamArn, shardId, position) {
      try {
        const out = await streams.send(
          new GetShardIteratorCommand({
            StreamArn: streamArn,
            ShardId: shardId,
            ShardIteratorType: position.type,
            ...(position.type === 'AFTER_SEQUENCE_NUMBER' ? { SequenceNumber: position.sequenceNumber } : {}),
          }),
        );
        return out.ShardIterator;
      } catch (err) {
        if ((err as { name?: string }).name === 'ResourceNotFoundException') return undefined;
        if (LOST.has((err as { name?: string }).name ?? '')) throw new StreamPositionLost(err);
        throw err;
      }
    },

    async records(iterator, limit = 100) {
      try {
        const out = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: limit }));
        return {
          records: (out.Records ?? []).map((r) => toLambdaRecord(r, region)),
          next: out.NextShardIterator ?? undefined,
        };
      } catch (err) {
        if (LOST.has((err as { name?: string }).name ?? '')) throw new StreamPositionLost(err);
        throw err;
      }
    },

    destroy() {
      tables.destroy();
      streams.destroy();
    },
  };
}

/** A stream record as the Lambda event source mapping delivers it. */
function toLambdaRecord(r: SdkRecord, region: string): DynamoDBRecord {
  const d = r.dynamodb ?? {};
  return {
    eventID: r.eventID,
    eventName: r.eventName,
    eventVersion: r.eventVersion ?? '1.1',
    eventSource: r.eventSource ?? 'aws:dynamodb',
    awsRegion: r.awsRegion ?? region,
    dynamodb: {
      ...(d.ApproximateCreationDateTime
        ? { ApproximateCreationDateTime: Math.floor(d.ApproximateCreationDateTime.getTime() / 1000) }
        : {}),
      ...(d.Keys ? { Keys: toLambdaImage(d.Keys) } : {}),
      ...(d.NewImage ? { NewImage: toLambdaImage(d.NewImage) } : {}),
      ...(d.OldImage ? { OldImage: toLambdaImage(d.OldImage) } : {}),
      SequenceNumber: d.SequenceNumber,
      SizeBytes: d.SizeBytes,
      StreamViewType: d.StreamViewType,
    },
    ...(r.userIdentity ? { userIdentity: r.userIdentity } : {}),
  };
}

function toLambdaImage(image: Record<string, SdkAttributeValue>): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const [k, v] of Object.entries(image)) out[k] = toLambdaValue(v);
  return out;
}

/** The SDK decodes binary attributes to bytes; the Lambda event carries them as base64 text. */
function toLambdaValue(v: SdkAttributeValue): AttributeValue {
  if (v.S !== undefined) return { S: v.S };
  if (v.N !== undefined) return { N: v.N };
  if (v.BOOL !== undefined) return { BOOL: v.BOOL };
  if (v.NULL !== undefined) return { NULL: v.NULL };
  if (v.B !== undefined) return { B: Buffer.from(v.B).toString('base64') };
  if (v.SS !== undefined) return { SS: v.SS };
  if (v.NS !== undefined) return { NS: v.NS };
  if (v.BS !== undefined) return { BS: v.BS.map((b) => Buffer.from(b).toString('base64')) };
  if (v.L !== undefined) return { L: v.L.map(toLambdaValue) };
  if (v.M !== undefined) return { M: toLambdaImage(v.M) };
  return { NULL: true };
}
