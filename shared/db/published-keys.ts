/**
 * The public JWKS in the table (AWS): one item, PK `KEYS` / SK `JWKS`, written by the stack's key
 * manager (functions/keygen) and read by every function that verifies access tokens.
 *
 * Why the table and not a secret of its own: every verifying function already holds a DynamoDB
 * client and a connection to the table, so the first request of a new execution environment
 * reads the keys over that connection. No Secrets Manager client ships in its bundle, and no
 * second TLS connection is opened before the token can be checked. The keys are public. The
 * private ring stays in its secret, which only the token function and the key manager read.
 *
 * The JWKS is stored as the JSON text the key manager wrote (`Jwks`, a string attribute), so what
 * a verifier reads is byte for byte what was published.
 */
import { GetItemCommand, PutItemCommand, type DynamoDBClient, type GetItemCommandOutput } from '@aws-sdk/client-dynamodb';
import { PUBLIC_KEYS_PK, PUBLIC_KEYS_SK } from './item-keys.ts';
import { sendTo } from './send.ts';

const KEY = { PK: { S: PUBLIC_KEYS_PK }, SK: { S: PUBLIC_KEYS_SK } };

/**
 * The published JWKS text, or undefined before the key manager first wrote it. `consistent`: the
 * key manager reads its own writes back; verifiers take an eventually consistent read (half the
 * read units; a new key is published a cache lifetime before it signs).
 */
export async function readPublishedJwks(client: DynamoDBClient, tableName: string, opts: { readonly consistent?: boolean } = {}): Promise<string | undefined> {
  const out = await sendTo<GetItemCommandOutput>(client, new GetItemCommand({ TableName: tableName, Key: KEY, ConsistentRead: opts.consistent === true }));
  return out.Item?.Jwks?.S;
}

/** Replaces the published JWKS (the key manager only). */
export async function writePublishedJwks(client: DynamoDBClient, tableName: string, jwks: string): Promise<void> {
  await sendTo(client, new PutItemCommand({ TableName: tableName, Item: { ...KEY, Jwks: { S: jwks } } }));
}
