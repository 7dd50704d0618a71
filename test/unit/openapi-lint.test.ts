/**
 * `@redocly/cli lint` with the recommended rules (redocly.yaml) finds no error in
 * docs/openapi.json; the warnings it may report are those redocly.yaml lists with a reason.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOCUMENT_PATH } from '../../openapi/paths.ts';
import { REPO_ROOT } from '../support/runtime.ts';

describe('openapi lint', () => {
  it('passes @redocly/cli lint (recommended) with zero errors', () => {
    const cli = join(REPO_ROOT, 'node_modules', '.bin', 'redocly');
    const run = spawnSync(cli, ['lint', DOCUMENT_PATH, '--format=summary', `--config=${join(REPO_ROOT, 'redocly.yaml')}`], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      // No telemetry, no update check: the unit tests use no network.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      timeout: 60_000,
    });
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.status, output).toBe(0);
    expect(output).toMatch(/Your API description is valid/);
    expect(output).not.toMatch(/^\s*error\s/m);
    // Every kept warning is listed in redocly.yaml with its reason.
    const config = readFileSync(join(REPO_ROOT, 'redocly.yaml'), 'utf8');
    const warned = [...output.matchAll(/^\s*warning\s+([a-z0-9.-]+):/gm)].map((m) => m[1]!);
    for (const rule of warned) expect(config, `warning ${rule} is not listed in redocly.yaml`).toMatch(new RegExp(`^# - ${rule}:`, 'm'));
  }, 90_000);
});
