/**
 * The shared response check of the call helpers, and the run's coverage summary: a response the
 * document does not describe throws with its operation, status and the schema's complaint; the
 * summary adds up the test files' counts and lists the operations none of them exercised.
 */
import { describe, expect, it } from 'vitest';
import { formatSummary, summarize } from '../support/openapi-coverage-reporter.ts';
import { assertDocumented, OpenApiMismatchError, sharedValidator } from '../support/openapi-validator.ts';

const json = 'application/json; charset=utf-8';
const people = '/api/f/0123456789abcdef01234567/people';

describe('assertDocumented', () => {
  it('accepts a declared status with the spec\'s error body, and counts it for its operation', () => {
    const before = sharedValidator().counts.get('listPeople') ?? 0;

    assertDocumented({ method: 'GET', path: people, status: 404, contentType: json, text: '{"Error":"NotFound","Message":"No such folder."}' });

    expect(sharedValidator().counts.get('listPeople')).toBe(before + 1);
  });

  it('rejects an undeclared status, naming the operation and the declared ones', () => {
    const check = () => assertDocumented({ method: 'GET', path: '/api/sysinfo', status: 418, contentType: json, text: '{}' });

    expect(check).toThrow(OpenApiMismatchError);
    expect(check).toThrow(/sysinfo \(GET \/api\/sysinfo\) → 418: status 418 is not declared \(declared: 200,/);
  });

  it('rejects a body that does not match the schema, with the schema\'s complaint', () => {
    expect(() => assertDocumented({ method: 'POST', path: people, status: 400, contentType: json, text: '{"error":"x"}' })).toThrow(
      /createPeople .* → 400: the body does not match the schema: \(body\) must have required property 'Error'/,
    );
  });

  it('rejects an undeclared Content-Type and a body where none is declared', () => {
    expect(() => assertDocumented({ method: 'GET', path: '/api/sysinfo', status: 500, contentType: 'text/plain', text: 'oops' })).toThrow(/Content-Type "text\/plain" is not declared/);
    expect(() => assertDocumented({ method: 'DELETE', path: `${people}/0123456789abcdef01234568`, status: 204, contentType: json, text: '{}' })).toThrow(
      /a body where none is declared/,
    );
  });

  it('leaves a path no operation routes (the catch-all 404) unchecked', () => {
    expect(() => assertDocumented({ method: 'GET', path: '/no/such/path', status: 404, contentType: json, text: '{"Error":"NotFound","Message":"x"}' })).not.toThrow();
  });

  it('checks a request body against its operation\'s schema', () => {
    const v = sharedValidator();

    expect(v.requestBodyProblems('POST', '/api/f/{folderKey}/lastevent', ['a', 'b'])).toEqual([]);
    expect(v.requestBodyProblems('POST', '/api/f/{folderKey}/lastevent', { keys: 1 })).toEqual(['(body) must be array']);
  });
});

describe('coverage summary', () => {
  const operations = [
    { operationId: 'sysinfo', method: 'get', path: '/api/sysinfo' },
    { operationId: 'listPeople', method: 'get', path: '/api/f/{folderKey}/people' },
    { operationId: 'jwks', method: 'get', path: '/.well-known/jwks.json' },
  ];

  it('adds up the files\' counts and lists the operations none exercised', () => {
    const s = summarize(
      [
        { validated: { sysinfo: 2, listPeople: 1 }, mismatches: [] },
        { validated: { listPeople: 4 }, mismatches: [] },
      ],
      operations,
    );

    expect(s).toEqual({ files: 2, total: 7, validated: { listPeople: 5, sysinfo: 2 }, unexercised: ['jwks (GET /.well-known/jwks.json)'], mismatches: [] });
    expect(formatSummary(s, operations.length)).toContain('7 responses in 2 test files validated against docs/openapi.json, 2 of 3 operations exercised, 0 mismatches.');
    expect(formatSummary(s, operations.length)).toMatch(/listPeople +5 {3}sysinfo +2\n/);
  });
});
