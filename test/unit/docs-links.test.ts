/**
 * Issue #35: the README is a front door to the guides of docs/, and what they say must stay true
 * as the code moves. Every relative link of README.md and docs/*.md names a file that exists (and
 * a heading that exists, for a `#anchor`), every `npm run <script>` they name is a script of the
 * package it runs in, and every GATEHOUSE_* setting shared/config.ts reads has its row in the one
 * configuration table, docs/configuration.md.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/runtime.ts';

const DOCS = join(REPO_ROOT, 'docs');
const PAGES = [join(REPO_ROOT, 'README.md'), ...readdirSync(DOCS).filter((f) => f.endsWith('.md')).map((f) => join(DOCS, f))];

/** The page's lines outside fenced code blocks (a `#` there is a shell comment, not a heading). */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (line.startsWith('```')) fenced = !fenced;
    return !fenced && !line.startsWith('```');
  });
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as dashes, `-1`... on repeats. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!.toLowerCase().replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** Every broken relative link of a page: a target file that does not exist, or an anchor no heading has. */
function brokenLinks(page: string, text: string): string[] {
  const broken: string[] = [];
  for (const line of prose(text)) {
    for (const [, target] of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue; // https:, mailto:: not ours to check offline
      const [path, anchor] = target!.split('#', 2) as [string, string | undefined];
      const file = path === '' ? page : join(dirname(page), decodeURIComponent(path));
      const where = `${relative(REPO_ROOT, page)}: (${target})`;
      if (!existsSync(file)) broken.push(`${where}: no such file`);
      else if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(readFileSync(file, 'utf8')).has(anchor)) {
        broken.push(`${where}: no such heading`);
      }
    }
  }
  return broken;
}

function scriptsOf(packageDir: string): Record<string, string> {
  return (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
}

/** Every `npm run <script>` (or `npm start`, `npm test`) a page names that its package does not define. */
function missingScripts(page: string, text: string): string[] {
  const root = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { workspaces?: string[] };
  const workspaces = new Map<string, string>();
  for (const dir of root.workspaces ?? []) {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, dir, 'package.json'), 'utf8')) as { name: string };
    workspaces.set(pkg.name, join(REPO_ROOT, dir));
  }
  const missing: string[] = [];
  for (const m of text.matchAll(/\bnpm (?:run(?:-script)? ([\w:.-]+)|(start|test|stop|restart)\b)((?:[ \t]+[^\s`;&|)]+)*)/g)) {
    const script = (m[1] ?? m[2])!;
    // `-w <package>` / `--workspace <package>` runs the script of that workspace package.
    const workspace = /(?:^|\s)(?:-w|--workspace)[ =](\S+)/.exec(m[3] ?? '')?.[1];
    const dir = workspace === undefined ? REPO_ROOT : workspaces.get(workspace);
    if (dir === undefined) missing.push(`${relative(REPO_ROOT, page)}: ${m[0]}: no workspace ${workspace}`);
    else if (!(script in scriptsOf(dir))) missing.push(`${relative(REPO_ROOT, page)}: ${m[0]}: no script "${script}"`);
  }
  return missing;
}

describe('README.md and docs/*.md', () => {
  it('link only to files and headings that exist', () => {
    const broken = PAGES.flatMap((page) => brokenLinks(page, readFileSync(page, 'utf8')));
    expect(broken).toEqual([]);
  });

  it('link every guide of docs/ from the README', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    for (const page of PAGES.slice(1)) expect(readme, relative(REPO_ROOT, page)).toContain(`](docs/${relative(DOCS, page)})`);
  });

  it('name only npm scripts that exist', () => {
    const missing = PAGES.flatMap((page) => missingScripts(page, readFileSync(page, 'utf8')));
    expect(missing).toEqual([]);
  });

  it('give every GATEHOUSE_* setting of shared/config.ts a row of the configuration table', () => {
    const settings = [...new Set(readFileSync(join(REPO_ROOT, 'shared', 'config.ts'), 'utf8').match(/\bGATEHOUSE_[A-Z0-9_]*[A-Z0-9]\b/g))];
    expect(settings.length).toBeGreaterThan(40);
    const rows = new Set(
      readFileSync(join(DOCS, 'configuration.md'), 'utf8')
        .split('\n')
        .map((line) => /^\| `(\w+)` \|/.exec(line)?.[1])
        .filter((name) => name !== undefined),
    );
    expect(settings.filter((name) => !rows.has(name))).toEqual([]);
  });

  it('catch a broken link, a missing heading and an unknown script (the checks themselves)', () => {
    const page = join(REPO_ROOT, 'README.md');
    expect(brokenLinks(page, '[x](docs/no-such-guide.md) [y](docs/api.md#no-such-heading) [z](docs/api.md#rate-limits)')).toEqual([
      'README.md: (docs/no-such-guide.md): no such file',
      'README.md: (docs/api.md#no-such-heading): no such heading',
    ]);
    expect(missingScripts(page, '`npm run no-such-script` and `npm run build -w @gatehouse/client`, `npm run bench -- --quick`')).toEqual([
      'README.md: npm run no-such-script: no script "no-such-script"',
    ]);
    expect(anchorsOf('## Retrying writes safely (`Idempotency-Key`)\n## A\n## A')).toEqual(
      new Set(['retrying-writes-safely-idempotency-key', 'a', 'a-1']),
    );
  });
});
