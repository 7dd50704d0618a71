import { beforeAll, describe, expect, it } from 'vitest';
import { ConditionFailed } from '#shared/errors.ts';
import { claimOwner, getObject, getObjects, listCollection } from '#shared/db/objects-repo.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';
import { createObject, deleteObject, failedClaim, replaceObject } from '#shared/db/object-writes.ts';
import { cardClaim } from '#shared/model/claims.ts';
import { newKey, placeIn, placeInstance } from '#shared/model/placement.ts';
import { createTestDb, type TestDb } from '../support/db.ts';

let t: TestDb;
let root: StoredObject;

function person(name: string): StoredObject {
  return { key: newKey(), collection: 'people', type: 'PersonInfo', ...placeIn(root), version: 1, doc: { $type: 'PersonInfo', CommonName: name } };
}

beforeAll(async () => {
  t = await createTestDb();
  const key = newKey();
  root = { key, collection: 'instances', type: 'InstanceInfo', ...placeInstance(key, undefined), version: 1, doc: { CommonName: 'Root' } };
  await createObject(t.db, root);
});

describe('object repository', () => {
  it('stores any document and reads it back with one GetItem', async () => {
    const p = { ...person('Ann'), doc: { CommonName: 'Ann', Vendor: { deep: [1, { x: 'y' }] }, Huge: 1e300 } };
    await createObject(t.db, p);
    const before = t.calls.length;
    const back = await getObject(t.db, p.key);
    expect(t.calls.length - before).toBe(1);
    expect(back).toEqual(p);
  });

  it('reads many objects at once through the plain client, each its own, each counted', async () => {
    const people = Array.from({ length: 12 }, (_, i) => person(`Reader ${i}`));
    for (const p of people) await createObject(t.db, p);
    const before = t.calls.length;
    const back = await Promise.all([...people, ...people].map((p) => getObject(t.db, p.key, true)));
    expect(back).toEqual([...people, ...people]);
    const calls = t.calls.slice(before);
    expect(calls.map((c) => c.command)).toEqual(Array(24).fill('GetItem'));
    expect(calls.every((c) => c.read > 0 && c.write === 0)).toBe(true);
    expect(await getObject(t.db, newKey())).toBeUndefined();
  });

  it('lists a folder collection in creation order, one Query a page', async () => {
    const made = [person('p1'), person('p2'), person('p3')];
    for (const p of made) await createObject(t.db, p);
    const first = await listCollection(t.db, root.key, 'people', 2);
    expect(first.items.length).toBe(2);
    const all = [...first.items];
    let next = first.nextStart;
    while (next) {
      const page = await listCollection(t.db, root.key, 'people', 2, next);
      all.push(...page.items);
      next = page.nextStart;
    }
    const keys = all.map((o) => o.key);
    expect(keys).toEqual([...keys].sort());
    for (const p of made) expect(keys).toContain(p.key);
  });

  it('lets exactly one of two racing writers claim a card number', async () => {
    const a = person('a');
    const b = person('b');
    const claim = cardClaim(root.key, 4242, 7);
    const results = await Promise.allSettled([createObject(t.db, a, [claim]), createObject(t.db, b, [claim])]);
    expect(results.filter((r) => r.status === 'fulfilled').length).toBe(1);
    const loser = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(loser.reason).toBeInstanceOf(ConditionFailed);
    expect(failedClaim(loser.reason, [claim], 1)).toEqual(claim);
    const owner = await claimOwner(t.db, claim, true);
    expect([a.key, b.key]).toContain(owner);
    const losing = owner === a.key ? b : a;
    expect(await getObject(t.db, losing.key, true)).toBeUndefined();
  });

  it('rejects a replace at a stale version and keeps the winner', async () => {
    const p = person('v');
    await createObject(t.db, p);
    await replaceObject(t.db, { ...p, version: 2, doc: { CommonName: 'v2' } }, 1);
    await expect(replaceObject(t.db, { ...p, version: 2, doc: { CommonName: 'lost' } }, 1)).rejects.toBeInstanceOf(ConditionFailed);
    expect((await getObject(t.db, p.key, true))?.doc).toEqual({ CommonName: 'v2' });
  });

  it('frees claims on delete and reads many objects in one batch', async () => {
    const p = person('d');
    const claim = cardClaim(root.key, 99);
    await createObject(t.db, p, [claim]);
    const q = person('e');
    await createObject(t.db, q);
    expect((await getObjects(t.db, [q.key, 'ffffffffffffffffffffffff', p.key])).map((o) => o.key)).toEqual([q.key, p.key]);
    await deleteObject(t.db, p, [claim]);
    expect(await claimOwner(t.db, claim, true)).toBeUndefined();
    expect(await getObject(t.db, p.key, true)).toBeUndefined();
  });
});
