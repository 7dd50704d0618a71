/**
 * Structured JSON logging (Powertools Logger). A JSON replacer redacts every attribute whose
 * name says it holds a secret, wherever it is nested, so a careless log line cannot leak one.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { Config } from './config.ts';

const SECRET_NAME = /pass(word)?|secret|token|authorization|cookie|onetime|otp|code$|^code|license|private|^d$/i;

export const REDACTED = '[redacted]';

/** JSON replacer used by the logger: values of secret-named keys never reach the log. */
export function redactSecrets(key: string, value: unknown): unknown {
  if (key && SECRET_NAME.test(key) && value !== undefined && value !== null && value !== '') return REDACTED;
  return value;
}

export function createLogger(cfg: Pick<Config, 'logLevel'>, serviceName = 'gatehouse'): Logger {
  const logLevel = cfg.logLevel === 'SILENT' ? 'SILENT' : cfg.logLevel;
  return new Logger({ serviceName, logLevel, jsonReplacerFn: redactSecrets });
}
