/** `onFirstUse` and `operationsOnFirstCall`: what a module loads with `import()` is loaded once, on the first call only. */
import { describe, expect, it } from 'vitest';
import { onFirstUse } from '#shared/first-use.ts';
import { operationsOnFirstCall } from '#shared/http/lazy-operations.ts';
import { ok, type ApiRequest, type BaseDeps } from '#shared/http/operation-contract.ts';

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

describe('operationsOnFirstCall', () => {
  it('names every operation at once, loads their module with the first call on any, and passes each call through', async () => {
    let loads = 0;
    const ops = operationsOnFirstCall(async () => {
      loads++;
      return { listThings: async (req: ApiRequest) => ok({ listed: req.path }), addThing: async () => ok({ added: true }) };
    }, ['listThings', 'addThing']);
    expect(Object.keys(ops).sort()).toEqual(['addThing', 'listThings']);
    expect(loads).toBe(0);
    const deps = {} as BaseDeps;
    expect(await ops.listThings({ path: '/x' } as ApiRequest, deps)).toEqual(ok({ listed: '/x' }));
    expect(await ops.addThing({ path: '/y' } as ApiRequest, deps)).toEqual(ok({ added: true }));
    expect(loads).toBe(1);
  });
});
