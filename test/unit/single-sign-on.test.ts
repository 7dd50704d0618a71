/** Single sign-on's pure rules: its settings, issuers, clients and redirect URIs, role mapping, the code grant's form. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '#shared/config.ts';
import { issuerProblem, isLoopbackHost } from '#shared/auth/sso/provider-rules.ts';
import { authorizationServerMetadata, redirectUrisOf } from '#shared/auth/sso/flow.ts';
import { domainAllowed, emailDomain, mappedRole } from '#shared/auth/sso/sso-users.ts';
import { checkClient, readTokenRequest } from '#shared/auth/token-request.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';

const provider = (doc: Record<string, unknown>): StoredObject => ({
  key: 'p1',
  collection: 'identityproviders',
  type: 'IdentityProviderInfo',
  folder: 'i1',
  path: ['i1'],
  instances: ['i1'],
  version: 1,
  doc,
});

describe('single sign-on settings', () => {
  it('reads GATEHOUSE_OAUTH_CLIENTS as JSON, and fails fast on a bad one', () => {
    expect(loadConfig({}).oauthClients).toEqual([]);
    const cfg = loadConfig({ GATEHOUSE_OAUTH_CLIENTS: '[{"clientId":"door-app","redirectUris":["https://app.example.com/cb"]}]' });
    expect(cfg.oauthClients).toEqual([{ clientId: 'door-app', redirectUris: ['https://app.example.com/cb'] }]);
    for (const bad of ['{', '{}', '[{"redirectUris":["https://a.example/cb"]}]', '[{"clientId":"x","redirectUris":[]}]', '[{"clientId":"x","redirectUris":["/relative"]}]', '[{"clientId":"x","redirectUris":["https://a.example/cb#frag"]}]']) {
      expect(() => loadConfig({ GATEHOUSE_OAUTH_CLIENTS: bad }), bad).toThrow('GATEHOUSE_OAUTH_CLIENTS');
    }
  });

  it('allows loopback issuers only when GATEHOUSE_IDP_ALLOW_LOOPBACK says so (false unless set)', () => {
    expect(loadConfig({}).idpAllowLoopback).toBe(false);
    expect(loadConfig({ GATEHOUSE_IDP_ALLOW_LOOPBACK: 'true' }).idpAllowLoopback).toBe(true);
    expect(issuerProblem('https://login.example.com/t/v2.0', false)).toBeUndefined();
    expect(issuerProblem('http://login.example.com', true)).toContain('https');
    expect(issuerProblem('http://127.0.0.1:9000', false)).toBe('must be https');
    expect(issuerProblem('http://127.0.0.1:9000', true)).toBeUndefined();
    expect(issuerProblem('http://[::1]:9000', true)).toBeUndefined();
    expect(issuerProblem('https://user:pw@login.example.com', false)).toContain('credentials');
    for (const issuer of ['https://10.0.0.5', 'https://169.254.169.254', 'https://192.168.1.1:8443', 'https://[fd00::1]', 'https://127.0.0.1']) {
      expect(issuerProblem(issuer, false), issuer).toContain('private');
    }
    expect(issuerProblem('https://8.8.8.8', false)).toBeUndefined();
    expect(issuerProblem('https://[2001:db8::1]', false)).toBeUndefined();
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('127.1.2.3')).toBe(true);
    expect(isLoopbackHost('10.0.0.1')).toBe(false);
  });
});

describe('clients and redirect URIs', () => {
  const cfg = loadConfig({ GATEHOUSE_OAUTH_CLIENTS: '[{"clientId":"door-app","redirectUris":["https://app.example.com/cb"]}]' });

  it('registers the console at <base>/console/callback and the configured clients at their URIs; nobody else', () => {
    expect(redirectUrisOf(cfg, 'gatehouseConsole', 'https://api.example.com')).toEqual(['https://api.example.com/console/callback']);
    expect(redirectUrisOf(cfg, 'door-app', 'https://api.example.com')).toEqual(['https://app.example.com/cb']);
    expect(redirectUrisOf(cfg, 'consoleApp', 'https://api.example.com')).toBeUndefined();
  });

  it('lets the public clients refresh without a secret, and keeps refusing unknown clients', () => {
    const codeOf = (f: () => void) => {
      try {
        f();
        return undefined;
      } catch (err) {
        return (err as { code: string }).code;
      }
    };
    expect(codeOf(() => checkClient(cfg, 'door-app', undefined))).toBeUndefined();
    expect(codeOf(() => checkClient(cfg, 'gatehouseConsole', undefined))).toBeUndefined();
    expect(codeOf(() => checkClient(cfg, 'door-app', 'a-guess'))).toBe('invalid_client');
    expect(codeOf(() => checkClient(cfg, 'mallory', undefined))).toBe('invalid_client');
  });

  it('reads the authorization_code grant\'s fields', () => {
    const req = readTokenRequest(new Map(Object.entries({ grant_type: 'authorization_code', client_id: 'door-app', code: 'c', code_verifier: 'v', redirect_uri: 'https://app.example.com/cb' })));
    expect(req).toMatchObject({ grantType: 'authorization_code', clientId: 'door-app', code: 'c', codeVerifier: 'v', redirectUri: 'https://app.example.com/cb' });
  });

  it('describes the authorization server (RFC 8414) at its base URL', () => {
    expect(authorizationServerMetadata('https://api.example.com')).toMatchObject({
      issuer: 'https://api.example.com',
      authorization_endpoint: 'https://api.example.com/oauth/authorize',
      token_endpoint: 'https://api.example.com/token',
      code_challenge_methods_supported: ['S256'],
    });
  });
});

describe('role mapping and domains', () => {
  const p = provider({ RoleClaim: 'groups', RoleMapping: { ops: 'Operator', admins: 'Administrator' }, DefaultRole: 'ReadOnly', EmailDomains: ['example.com'] });

  it('gives the most privileged mapped role, else DefaultRole; nothing when the provider maps no roles', () => {
    expect(mappedRole(p, { groups: ['ops', 'admins'] })).toBe('Administrator');
    expect(mappedRole(p, { groups: 'ops' })).toBe('Operator');
    expect(mappedRole(p, { groups: ['staff'] })).toBe('ReadOnly');
    expect(mappedRole(p, {})).toBe('ReadOnly');
    expect(mappedRole(provider({ DefaultRole: 'Operator' }), { groups: ['admins'] })).toBeUndefined();
  });

  it('compares email domains lower-case', () => {
    expect(emailDomain('Ann@Example.COM')).toBe('example.com');
    expect(domainAllowed(p, 'ann@EXAMPLE.com')).toBe(true);
    expect(domainAllowed(p, 'ann@example.com.evil.org')).toBe(false);
    expect(domainAllowed(p, 'not-an-email')).toBe(false);
  });
});
