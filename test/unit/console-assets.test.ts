import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { consoleAsset, consoleCsp, consoleIndexHtml, type ConsoleFiles } from '../../shared/console/console-assets.ts';
import { ApiError } from '../../shared/errors.ts';

const files: ConsoleFiles = {
  index: consoleIndexHtml('/console/assets/console-AB12.js', '/console/assets/console-CD34.css'),
  assets: new Map([
    ['console-AB12.js', new TextEncoder().encode('console.log(1)')],
    ['console-CD34.css', new TextEncoder().encode('body{}')],
    ['notes.txt', new TextEncoder().encode('not served')],
  ]),
};

describe('the console page', () => {
  it('names its script and stylesheet, and nothing inline', () => {
    expect(files.index).toContain('<script type="module" src="/console/assets/console-AB12.js"></script>');
    expect(files.index).toContain('<link rel="stylesheet" href="/console/assets/console-CD34.css">');
    expect(files.index).not.toMatch(/<script>|<style|style="/);
  });

  it('allows connections to the live events WebSocket origin and nothing else from elsewhere', () => {
    const csp = consoleCsp('wss://abc.execute-api.eu-west-1.amazonaws.com/prod?x=1');
    expect(csp).toContain("connect-src 'self' wss://abc.execute-api.eu-west-1.amazonaws.com;");
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
    // Not a WebSocket URL, or none: the service itself only.
    expect(consoleCsp('https://elsewhere.example')).toContain("connect-src 'self';");
    expect(consoleCsp(undefined)).toContain("connect-src 'self';");
    expect(consoleCsp('not a url')).toContain("connect-src 'self';");
  });
});

describe('the console files', () => {
  it('serves a built file with its type, plain and gzipped', () => {
    const js = consoleAsset(files, 'console-AB12.js');
    expect(js.contentType).toBe('text/javascript; charset=utf-8');
    expect(Buffer.from(js.base64, 'base64').toString()).toBe('console.log(1)');
    expect(gunzipSync(Buffer.from(js.gzipBase64, 'base64')).toString()).toBe('console.log(1)');
    expect(consoleAsset(files, 'console-CD34.css').contentType).toBe('text/css; charset=utf-8');
    // The same answer object the second time: compressed once.
    expect(consoleAsset(files, 'console-AB12.js')).toBe(js);
  });

  it('answers 404 for a name the build does not have, or a kind of file it does not serve', () => {
    for (const name of ['console-ZZZZ.js', '../index.html', 'notes.txt', '']) {
      expect(() => consoleAsset(files, name), name).toThrow(ApiError);
      try {
        consoleAsset(files, name);
      } catch (err) {
        expect((err as ApiError).status).toBe(404);
      }
    }
  });
});
