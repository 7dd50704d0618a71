/**
 * Invokes the family handlers in-process, as Lambda would: each family's `handler.ts` is imported
 * on first use (so a family that does not exist yet fails only its own routes), and each call gets
 * a Lambda-like context.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import type { Family } from '#shared/model/collections.ts';

/** API Gateway's integration timeout (HTTP API: 30 s); also what the context reports. */
export const INVOKE_TIMEOUT_MS = 30_000;

export type LambdaHandler = (event: any, context: Context) => Promise<unknown>;

/** The family's `functions/<family>/handler.ts` does not exist (yet). */
export class FamilyMissing extends Error {
  constructor(readonly family: Family) {
    super(`functions/${family}/handler.ts does not exist`);
    this.name = 'FamilyMissing';
  }
}

/** A Lambda context for one invocation. */
export function lambdaContext(family: Family, requestId: string = randomUUID(), timeoutMs = INVOKE_TIMEOUT_MS): Context {
  const deadline = Date.now() + timeoutMs;
  const functionName = `gatehouse-${family}`;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/${process.pid}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

export class FamilyLoader {
  private readonly loaded = new Map<Family, Promise<LambdaHandler>>();

  /** The family's exported `handler`. Failures are not cached: a family that lands later loads then. */
  handler(family: Family): Promise<LambdaHandler> {
    let h = this.loaded.get(family);
    if (!h) {
      h = this.importHandler(family);
      this.loaded.set(family, h);
      h.catch(() => this.loaded.delete(family));
    }
    return h;
  }

  /** Calls the family's handler with a fresh context. */
  async invoke(family: Family, event: unknown, requestId?: string): Promise<unknown> {
    const handler = await this.handler(family);
    return handler(event, lambdaContext(family, requestId));
  }

  private async importHandler(family: Family): Promise<LambdaHandler> {
    let mod: { handler?: unknown };
    try {
      const specifier = `#functions/${family}/handler.ts`;
      mod = (await import(/* @vite-ignore */ specifier)) as { handler?: unknown };
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { url?: string };
      const self = `functions/${family}/handler.ts`;
      if (e.code === 'ERR_MODULE_NOT_FOUND' && (e.url?.endsWith(self) || e.message.includes(`${self}'`))) {
        throw new FamilyMissing(family);
      }
      throw err;
    }
    if (typeof mod.handler !== 'function') throw new Error(`functions/${family}/handler.ts exports no handler`);
    return mod.handler as LambdaHandler;
  }
}
