import { describe, expect, it } from 'vitest';
import { formatSlowest, slowest } from '../support/slowest-files-reporter.ts';

describe('the slowest-files reporter', () => {
  const timings = Array.from({ length: 14 }, (_, i) => ({ project: i % 2 ? 'e2e' : 'unit', file: `test/f${String(i).padStart(2, '0')}.test.ts`, ms: (i * 7919) % 13_000 }));

  it('keeps the ten slowest, slowest first', () => {
    const top = slowest(timings);
    expect(top).toHaveLength(10);
    const ms = top.map((t) => t.ms);
    expect(ms).toEqual([...ms].sort((a, b) => b - a));
    const cut = Math.min(...ms);
    expect(timings.filter((t) => t.ms > cut)).toHaveLength(9);
  });

  it('orders ties by file name, so the list is stable', () => {
    const tied = [
      { project: 'unit', file: 'b.test.ts', ms: 5 },
      { project: 'unit', file: 'a.test.ts', ms: 5 },
    ];
    expect(slowest(tied).map((t) => t.file)).toEqual(['a.test.ts', 'b.test.ts']);
  });

  it('prints project, file and seconds in aligned columns', () => {
    const text = formatSlowest(
      [
        { project: 'e2e', file: 'test/e2e/long.test.ts', ms: 61_234 },
        { project: 'unit', file: 'test/unit/x.test.ts', ms: 1_040 },
      ],
      40,
    );
    expect(text).toContain('Slowest 2 of 40 test files:');
    expect(text).toMatch(/e2e test\/e2e\/long\.test\.ts\s+61\.2 s/);
    expect(text).toMatch(/unit test\/unit\/x\.test\.ts\s+1\.0 s/);
    const rows = text.split('\n').filter((l) => l.endsWith(' s'));
    expect(new Set(rows.map((r) => r.length)).size).toBe(1);
  });
});
