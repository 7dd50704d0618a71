/** `onFirstUse`: what a module loads with `import()` is loaded once, on the first call only. */
import { describe, expect, it } from 'vitest';
import { onFirstUse } from '#shared/first-use.ts';

describe('onFirstUse', () => {
  it('loads nothing until first called, then once however often and however concurrently it is called', async () => {
    let loads = 0;
    const load = onFirstUse(async () => ({ n: ++loads }));
    expect(loads).toBe(0);
    const [a, b] = await Promise.all([load(), load()]);
    const c = await load();
    expect(loads).toBe(1);
    expect(a).toBe(b);
    expect(c).toBe(a);
  });
});
