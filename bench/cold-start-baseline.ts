/**
 * The cold-start floor: a handler that only imports the DynamoDB document client, creates it at
 * module load (as every family does) and serves its first request with one GetItem. Bundled with
 * the same options as the families; it is never deployed.
 *
 * It reads process.env directly: it stands for the smallest possible function, not for ours.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

const endpoint = process.env.GATEHOUSE_DYNAMODB_ENDPOINT;
const client = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    region: process.env.GATEHOUSE_REGION ?? 'us-east-1',
    ...(endpoint ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  }),
);
const tableName = process.env.GATEHOUSE_TABLE_NAME ?? 'gatehouse';

export const handler = async (event: { key: { PK: string; SK: string } }): Promise<{ statusCode: number; body: string }> => {
  const out = await client.send(new GetCommand({ TableName: tableName, Key: event.key }));
  return { statusCode: out.Item ? 200 : 404, body: JSON.stringify(out.Item ?? null) };
};
