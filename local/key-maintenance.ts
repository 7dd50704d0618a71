/**
 * The local stand-in for the hourly key-rollover schedule of AWS (infra/signing-keys.ts): one
 * maintenance step of `<data dir>/keys/signing-key.json` every minute (a retired key is dropped
 * within a minute of its last token's expiry; a due rollover is published within a minute).
 */
import { maintainFileRing } from '#shared/auth/key-files.ts';
import type { RotationPolicy } from '#shared/auth/key-ring.ts';
import type { Logger } from '@aws-lambda-powertools/logger';

const KEY_MAINTENANCE_INTERVAL_MS = 60_000;

export interface KeyMaintenance {
  stop(): Promise<void>;
}

export function startKeyMaintenance(opts: {
  readonly dataDir: string;
  readonly policy: RotationPolicy;
  readonly logger: Logger;
  readonly intervalMs?: number;
}): KeyMaintenance {
  let running: Promise<void> = Promise.resolve();
  const step = () => {
    running = running.then(async () => {
      try {
        const m = await maintainFileRing(opts.dataDir, opts.policy);
        if (m.scheduled || m.dropped.length > 0) opts.logger.info('signing keys maintained', { scheduled: m.scheduled, dropped: m.dropped });
      } catch (err) {
        opts.logger.error('signing key maintenance failed', { error: (err as Error).message });
      }
    });
  };
  step();
  const timer = setInterval(step, opts.intervalMs ?? KEY_MAINTENANCE_INTERVAL_MS);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
