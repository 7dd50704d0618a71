import { describe, expect, it } from 'vitest';
import { loadConfig } from '#shared/config.ts';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c.tableName).toBe('gatehouse');
    expect(c.modelNamespace).toBe('Gatehouse.Model');
    expect(c.accessTokenTtl).toBe(86399);
    expect(c.lockoutThreshold).toBe(5);
    expect(c.lockoutMinutes).toBe(15);
    expect(c.eventRetentionDays).toBe(365);
    expect(c.maxBodyBytes).toBe(1_048_576);
    expect([c.throttleRate, c.throttleBurst]).toEqual([100, 200]);
    expect(c.rootInstance).toBe('Gatehouse');
    expect(c.adminUser).toBe('admin');
    expect(c.clientSecret).toBe('consoleSecret');
    expect(c.corsOrigins).toEqual([]);
    expect(c.version).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  });

  it('reads the local stage throttling, 0 turning it off', () => {
    const c = loadConfig({ GATEHOUSE_THROTTLE_RATE: '0', GATEHOUSE_THROTTLE_BURST: '50' });
    expect([c.throttleRate, c.throttleBurst]).toEqual([0, 50]);
  });

  it('reads the tenant rate limits, off by default, and refuses one that is not a whole number of at least 0', () => {
    expect([loadConfig({}).rateLimitPerInstance, loadConfig({}).rateLimitPerUser]).toEqual([0, 0]);
    const c = loadConfig({ GATEHOUSE_RATE_LIMIT_PER_INSTANCE: '100', GATEHOUSE_RATE_LIMIT_PER_USER: '20' });
    expect([c.rateLimitPerInstance, c.rateLimitPerUser]).toEqual([100, 20]);
    for (const bad of ['abc', '-1', '2.5']) {
      expect(() => loadConfig({ GATEHOUSE_RATE_LIMIT_PER_INSTANCE: bad })).toThrow(/GATEHOUSE_RATE_LIMIT_PER_INSTANCE: expected an integer/);
      expect(() => loadConfig({ GATEHOUSE_RATE_LIMIT_PER_USER: bad })).toThrow(/GATEHOUSE_RATE_LIMIT_PER_USER: expected an integer/);
    }
  });

  it('puts the build number in the fourth part of the version', () => {
    expect(loadConfig({ GATEHOUSE_BUILD_NUMBER: '42' }).version).toMatch(/\.42$/);
  });

  it('parses confidential clients and CORS origins', () => {
    const c = loadConfig({ GATEHOUSE_CLIENTS: 'svc:s3cret, other:x', GATEHOUSE_CORS_ORIGINS: 'https://a.example, https://b.example' });
    expect(c.clients.get('svc')).toBe('s3cret');
    expect(c.clients.get('other')).toBe('x');
    expect(c.corsOrigins).toEqual(['https://a.example', 'https://b.example']);
  });

  it('hashes new passwords at scrypt 2^17 unless a test run lowers it, never below 2^10', () => {
    expect(loadConfig({}).passwordHashCost).toBe(17);
    expect(loadConfig({ GATEHOUSE_PASSWORD_HASH_COST: '12' }).passwordHashCost).toBe(12);
    expect(() => loadConfig({ GATEHOUSE_PASSWORD_HASH_COST: '9' })).toThrow(/GATEHOUSE_PASSWORD_HASH_COST/);
    expect(() => loadConfig({ GATEHOUSE_PASSWORD_HASH_COST: '21' })).toThrow(/GATEHOUSE_PASSWORD_HASH_COST/);
  });

  it('rejects bad values naming the variable', () => {
    expect(() => loadConfig({ GATEHOUSE_ACCESS_TOKEN_TTL: 'soon' })).toThrow(/GATEHOUSE_ACCESS_TOKEN_TTL/);
    expect(() => loadConfig({ GATEHOUSE_MODEL_NAMESPACE: 'bad ns' })).toThrow(/GATEHOUSE_MODEL_NAMESPACE/);
    expect(() => loadConfig({ GATEHOUSE_CLIENTS: 'nocolon' })).toThrow(/GATEHOUSE_CLIENTS/);
    expect(() => loadConfig({ GATEHOUSE_THROTTLE_RATE: '-1' })).toThrow(/GATEHOUSE_THROTTLE_RATE/);
    expect(() => loadConfig({ GATEHOUSE_THROTTLE_BURST: 'lots' })).toThrow(/GATEHOUSE_THROTTLE_BURST/);
  });

  it('reads values as the zod schemas it replaced did: Number() coercion, safe integers, trimmed URLs, exact words', () => {
    expect(loadConfig({ GATEHOUSE_BUILD_NUMBER: '' }).buildNumber).toBe(0);
    expect(loadConfig({ GATEHOUSE_MAX_BODY_BYTES: ' 2048 ' }).maxBodyBytes).toBe(2048);
    expect(loadConfig({ GATEHOUSE_MAX_BODY_BYTES: '0x800' }).maxBodyBytes).toBe(2048);
    expect(() => loadConfig({ GATEHOUSE_MAX_BODY_BYTES: '2048.5' })).toThrow('GATEHOUSE_MAX_BODY_BYTES: expected an integer from 1024 to 10485760');
    expect(loadConfig({ GATEHOUSE_DYNAMODB_ENDPOINT: ' http://localhost:8000 ' }).dynamodbEndpoint).toBe('http://localhost:8000');
    expect(() => loadConfig({ GATEHOUSE_DYNAMODB_ENDPOINT: 'localhost' })).toThrow('GATEHOUSE_DYNAMODB_ENDPOINT: expected a URL');
    expect(loadConfig({ GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: 'yes' }).webhookAllowLoopback).toBe(true);
    expect(() => loadConfig({ GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: 'TRUE' })).toThrow('expected true, false, 1, 0, yes or no');
    expect(() => loadConfig({ GATEHOUSE_LOG_LEVEL: 'info' })).toThrow('GATEHOUSE_LOG_LEVEL: expected DEBUG, INFO, WARN, ERROR or SILENT');
    expect(() => loadConfig({ GATEHOUSE_WEBHOOK_RETRY_SCALE: '0' })).toThrow('expected a number above 0, at most 1');
    expect(loadConfig({ GATEHOUSE_WEBHOOK_RETRY_SCALE: '0.01' }).webhookRetryScale).toBe(0.01);
  });

  it('names every bad variable in one error, in the table\'s order', () => {
    expect(() => loadConfig({ GATEHOUSE_TABLE_NAME: 'ab', GATEHOUSE_LOG_LEVEL: 'LOUD' })).toThrow(
      'Invalid configuration: GATEHOUSE_TABLE_NAME: expected at least 3 characters; GATEHOUSE_LOG_LEVEL: expected DEBUG, INFO, WARN, ERROR or SILENT',
    );
  });
});
