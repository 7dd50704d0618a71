import { Stack } from 'aws-cdk-lib';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app.ts';
import { addNagChecks } from '../../infra/nag.ts';
import { newApp } from './app-fixture.ts';

describe('cdk-nag (AWS Solutions and Serverless packs)', () => {
  it('passes every stack with only the acknowledged findings', () => {
    const app = newApp();
    buildApp(app);
    addNagChecks(app);

    expect(() => app.synth()).not.toThrow();
  });

  it('passes the optional features too (custom domains, CORS, WebSocket access logs)', () => {
    const app = newApp({
      'gatehouse:regions': { EU: 'eu-west-1' },
      'gatehouse:corsOrigins': ['*'],
      'gatehouse:websocketAccessLogs': true,
      'gatehouse:customDomains': {
        EU: {
          certificateArn: 'arn:aws:acm:eu-west-1:111122223333:certificate/00000000-0000-0000-0000-000000000000',
          httpDomainName: 'eu.api.example.com',
          websocketDomainName: 'eu.events.example.com',
        },
      },
    });
    buildApp(app);
    addNagChecks(app);

    expect(() => app.synth()).not.toThrow();
  });

  it('rejects a synth with an unacknowledged finding', () => {
    const app = newApp({ 'gatehouse:regions': { EU: 'eu-west-1' } });
    buildApp(app);
    const extra = new Stack(app, 'Extra', { env: { region: 'eu-west-1' } });
    new Queue(extra, 'PlainQueue'); // no DLQ, no TLS-only policy
    addNagChecks(app);

    expect(() => app.synth()).toThrow(/AwsSolutions-SQS(3|4)/);
  });
});
