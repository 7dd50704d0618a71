/**
 * Local stand-ins for the AWS services the deployed bundles call besides DynamoDB, on one
 * `node:http` server on 127.0.0.1. Each speaks the service's own wire protocol, so the bundled
 * SDK clients reach them by endpoint alone (no code of ours is replaced), and each keeps what it
 * was sent for the test to check:
 *
 * - Secrets Manager (JSON 1.1, `X-Amz-Target: secretsmanager.GetSecretValue|PutSecretValue`):
 *   secrets held in memory, created with a placeholder value as CloudFormation creates them;
 * - the API Gateway Management API of the WebSocket stage (`POST <stage>/@connections/{id}`);
 * - the IoT data plane (`POST /topics/{topic}?qos=1`);
 * - SQS (JSON 1.0, `X-Amz-Target: AmazonSQS.SendMessage|SendMessageBatch`): messages recorded;
 * - CloudFormation's pre-signed response URL (`PUT /cfn-response`).
 *
 * Anything else answers 400 with the request recorded in `unexpected`, so a bundle calling a
 * service nobody stood in for fails visibly instead of hanging.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The WebSocket stage's path: the management API is served below it (`/events/@connections/{id}`). */
export const STAGE_PATH = '/events';

export interface ConnectionPost {
  readonly connectionId: string;
  readonly message: any;
}

export interface IotPublish {
  readonly topic: string;
  readonly qos: string | null;
  readonly payload: Buffer;
}

export interface SqsCall {
  readonly action: string;
  readonly input: any;
}

export interface UnexpectedCall {
  readonly method: string;
  readonly url: string;
  readonly target: string | undefined;
}

export class AwsStandIns {
  private server: Server | undefined;
  private port = 0;
  /** Secret id (ARN) → current value. */
  readonly secrets = new Map<string, string>();
  readonly secretReads: string[] = [];
  readonly secretWrites: string[] = [];
  readonly posts: ConnectionPost[] = [];
  readonly publishes: IotPublish[] = [];
  readonly sqs: SqsCall[] = [];
  readonly cfnResponses: any[] = [];
  readonly unexpected: UnexpectedCall[] = [];

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.serve(req, Buffer.concat(chunks), res));
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** A secret as CloudFormation creates it (`AWS::SecretsManager::Secret` with a generated value). */
  createSecret(arn: string): void {
    this.secrets.set(arn, `placeholder-${randomUUID()}`);
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }

  private serve(req: IncomingMessage, body: Buffer, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', this.url);
    const target = req.headers['x-amz-target'] as string | undefined;
    const json = (status: number, value: unknown, type = 'application/x-amz-json-1.1') => {
      res.writeHead(status, { 'content-type': type });
      res.end(JSON.stringify(value));
    };
    if (target?.startsWith('secretsmanager.')) return this.secretsManager(target.slice('secretsmanager.'.length), JSON.parse(body.toString('utf8')), json);
    if (target?.startsWith('AmazonSQS.')) {
      const action = target.slice('AmazonSQS.'.length);
      const input = JSON.parse(body.toString('utf8'));
      this.sqs.push({ action, input });
      const id = () => randomUUID();
      if (action === 'SendMessage') return json(200, { MessageId: id(), MD5OfMessageBody: '' }, 'application/x-amz-json-1.0');
      if (action === 'SendMessageBatch') {
        return json(200, { Successful: (input.Entries ?? []).map((e: { Id: string }) => ({ Id: e.Id, MessageId: id(), MD5OfMessageBody: '' })), Failed: [] }, 'application/x-amz-json-1.0');
      }
    }
    const connections = `${STAGE_PATH}/@connections/`;
    if (req.method === 'POST' && url.pathname.startsWith(connections)) {
      const connectionId = decodeURIComponent(url.pathname.slice(connections.length));
      this.posts.push({ connectionId, message: JSON.parse(body.toString('utf8')) });
      res.writeHead(200);
      return void res.end();
    }
    if (req.method === 'POST' && url.pathname.startsWith('/topics/')) {
      this.publishes.push({ topic: decodeURIComponent(url.pathname.slice('/topics/'.length)), qos: url.searchParams.get('qos'), payload: body });
      return json(200, {}, 'application/json');
    }
    if (req.method === 'PUT' && url.pathname === '/cfn-response') {
      this.cfnResponses.push(JSON.parse(body.toString('utf8')));
      res.writeHead(200);
      return void res.end();
    }
    this.unexpected.push({ method: req.method ?? '', url: req.url ?? '', target });
    json(400, { __type: 'UnknownOperationException', message: `No stand-in for ${req.method} ${req.url} ${target ?? ''}` });
  }

  private secretsManager(
    action: string,
    input: { SecretId?: string; SecretString?: string; VersionStage?: string },
    json: (status: number, value: unknown) => void,
  ): void {
    const id = input.SecretId ?? '';
    const value = this.secrets.get(id);
    // One version per secret, the current one: asking for another stage finds none, as in AWS.
    if (value === undefined || (input.VersionStage !== undefined && input.VersionStage !== 'AWSCURRENT')) {
      return json(400, { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." });
    }
    if (action === 'GetSecretValue') {
      this.secretReads.push(id);
      return json(200, { ARN: id, Name: id.split(':').at(-1), SecretString: value, VersionId: randomUUID(), VersionStages: ['AWSCURRENT'], CreatedDate: Date.now() / 1000 });
    }
    if (action === 'PutSecretValue' && typeof input.SecretString === 'string') {
      this.secretWrites.push(id);
      this.secrets.set(id, input.SecretString);
      return json(200, { ARN: id, Name: id.split(':').at(-1), VersionId: randomUUID(), VersionStages: ['AWSCURRENT'] });
    }
    this.unexpected.push({ method: 'POST', url: '/', target: `secretsmanager.${action}` });
    json(400, { __type: 'InvalidRequestException', message: `No stand-in for secretsmanager.${action}` });
  }
}
