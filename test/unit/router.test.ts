import { describe, expect, it } from 'vitest';
import { Router, matchOf, rememberMatch } from '#shared/http/router.ts';
import { COLLECTIONS } from '#shared/model/collections.ts';
import { ROUTES, routeKey, type Route } from '#shared/routes.ts';

const router = new Router();
const K = '0123456789abcdef01234567';

describe('route table', () => {
  it('has no duplicate rows', () => {
    const keys = ROUTES.map((r) => `${r.method} ${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('shares an API Gateway route only between rows of one family that the route can carry', () => {
    const families = new Map<string, Set<string>>();
    for (const r of ROUTES) (families.get(routeKey(r)) ?? families.set(routeKey(r), new Set()).get(routeKey(r))!).add(r.family);
    for (const [key, f] of families) expect([...f], key).toHaveLength(1);
    // A row's shared route matches its path in API Gateway: a greedy route's prefix, or a row of the table.
    for (const r of ROUTES.filter((x) => x.gateway)) {
      // `$default` carries whatever no route matches: the service family's (the console's rows).
      if (r.gateway === '$default') {
        expect(r.family, r.path).toBe('service');
        continue;
      }
      const [method, path] = r.gateway!.split(' ') as [string, string];
      if (path.endsWith('/{proxy+}')) expect(r.path.startsWith(path.slice(0, -'{proxy+}'.length)), r.path).toBe(true);
      // An ANY route carries the methods of one path.
      else if (method === 'ANY') expect(r.path, r.path).toBe(path);
      else expect(ROUTES.some((x) => !x.gateway && x.method === method && x.path === path && x.family === r.family), r.path).toBe(true);
    }
  });

  it('gives every collection its five calls', () => {
    for (const c of COLLECTIONS) {
      for (const [m, p] of [
        ['GET', `/api/f/${K}/${c.name}`],
        ['POST', `/api/f/${K}/${c.name}`],
        ['GET', `/api/f/${K}/${c.name}/${K}`],
        ['PUT', `/api/f/${K}/${c.name}/${K}`],
        ['DELETE', `/api/f/${K}/${c.name}/${K}`],
      ] as const) {
        const match = router.match(m, p);
        expect(match?.route.family, `${m} ${p}`).toBe(c.family);
        expect(match?.route.collection).toBe(c.name);
      }
    }
  });

  it('marks only sysinfo, token, JWKS, single sign-on, the OpenAPI document, its page, the console and the default route public', () => {
    const open = ROUTES.filter((r) => !r.auth && !r.scimToken)
      .map((r) => `${r.method} ${r.path}`)
      .sort();
    expect(open).toEqual([
      'ANY $default',
      'GET /',
      'GET /.well-known/jwks.json',
      'GET /.well-known/oauth-authorization-server',
      'GET /api/openapi.json',
      'GET /api/sysinfo',
      'GET /console',
      'GET /console/assets/{file}',
      'GET /console/{view}',
      'GET /console/{view}/{key}',
      'GET /docs',
      'GET /docs/api-reference.js',
      'GET /oauth/authorize',
      'GET /oauth/callback',
      'GET /oauth/providers',
      'POST /token',
      'POST /token/revoke',
    ]);
  });


  it('stays within the HTTP API route quota with room to grow', () => {
    expect(ROUTES.length).toBeLessThan(280);
  });
});

describe('Router', () => {
  it('prefers a literal segment over a parameter', () => {
    expect(router.match('GET', `/api/f/${K}/people`)?.route.operation).toBe('list');
    expect(router.match('GET', `/api/f/${K}/meta`)?.route.operation).toBe('getFolderLink');
    expect(router.match('PUT', `/api/f/${K}/apps/${K}/eventtypes`)?.route.operation).toBe('addEventType');
    expect(router.match('DELETE', `/api/f/${K}/apps/${K}/eventtypes/${K}`)?.route.operation).toBe('removeEventType');
    expect(router.match('DELETE', `/api/f/${K}/apps/${K}/notes/${K}`)?.route.operation).toBe('deleteLinkItem');
  });

  it('routes the card calls of people, and bycard over people/{key}', () => {
    const bycard = router.match('GET', `/api/f/${K}/people/bycard`);
    expect([bycard?.route.operation, bycard?.route.family, bycard?.params]).toEqual(['personByCard', 'people', { folderKey: K }]);
    expect(router.match('GET', `/api/f/${K}/people/${K}`)?.route.operation).toBe('get');
    expect(router.match('GET', `/api/f/${K}/people/${K}/cards`)?.route.operation).toBe('getLink');
    expect(router.match('POST', `/api/f/${K}/people/${K}/cards`)?.route.operation).toBe('postLink');
    const put = router.match('PUT', `/api/f/${K}/people/${K}/cards/${K}`);
    expect([put?.route.operation, put?.params]).toEqual(['putLinkItem', { folderKey: K, key: K, link: 'cards', linkKey: K }]);
    expect(router.match('DELETE', `/api/f/${K}/people/${K}/cards/${K}`)?.route.operation).toBe('deleteLinkItem');
    // PUT of a link item is for people only.
    expect(router.match('PUT', `/api/f/${K}/doors/${K}/cards/${K}`)?.route.path).toBe('$default');
  });

  it('sends connections/<relation> to the connection calls, even beside a {link}/{linkKey} row of the same method', () => {
    const path = `/api/f/${K}/people/${K}/connections/ScheduledAccessLevel`;
    expect(router.match('PUT', path)?.route.operation).toBe('connect');
    expect(router.match('POST', path)?.route.operation).toBe('connect');
    expect(router.match('GET', path)?.route.operation).toBe('listConnections');
    expect(router.match('PUT', `/api/f/${K}/people/${K}/scheduledaccesslevelbatch`)?.route.operation).toBe('putLink');
    // A param row such as a people-cards `PUT <Href>/{link}/{linkKey}`, listed before or after.
    const param: Route = { method: 'PUT', path: '/api/f/{folderKey}/people/{key}/{link}/{linkKey}', family: 'people', operation: 'putLinkItem', auth: true, collection: 'people' };
    for (const routes of [[param, ...ROUTES], [...ROUTES, param]]) {
      const r = new Router(routes);
      expect(r.match('PUT', path)?.route.operation).toBe('connect');
      expect(r.match('PUT', path)?.params).toEqual({ folderKey: K, key: K, relation: 'ScheduledAccessLevel' });
      expect(r.match('GET', path)?.route.operation).toBe('listConnections');
      expect(r.match('PUT', `/api/f/${K}/people/${K}/cards/${K}`)?.route.operation).toBe('putLinkItem');
    }
  });

  it('extracts and decodes path parameters', () => {
    const m = router.match('GET', `/api/f/${K}/people/${K}/meta`);
    expect(m?.params).toEqual({ folderKey: K, key: K, link: 'meta' });
    expect(router.match('GET', '/api/f/a%20b')?.params.folderKey).toBe('a b');
  });

  it('falls back to $default for unknown paths and methods', () => {
    expect(router.match('GET', '/nope')?.route.path).toBe('$default');
    expect(router.match('PATCH', `/api/f/${K}/people`)?.route.path).toBe('$default');
    expect(router.match('GET', '/token')?.route.path).toBe('$default');
  });

  it('ignores empty segments and a trailing slash', () => {
    expect(router.match('GET', '/api/sysinfo/')?.route.operation).toBe('sysinfo');
  });

  it('hands a match made for an event to the next router only for the same method and path', () => {
    const path = `/api/f/${K}/people/${K}`;
    const event = {};
    const m = router.match('get', path)!;
    expect(matchOf(event, 'GET', path)).toBeUndefined();
    rememberMatch(event, 'get', path, m);
    expect(matchOf(event, 'GET', path)).toBe(m);
    expect(matchOf(event, 'DELETE', path)).toBeUndefined();
    expect(matchOf(event, 'GET', `${path}/cards`)).toBeUndefined();
    expect(matchOf({}, 'GET', path)).toBeUndefined();
  });
});
