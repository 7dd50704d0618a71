/**
 * The relationships issue's work around the object calls (see `shared/relations/relation-links.ts`):
 * relation-kind ObjectLinks sent with a create or replace become connections (in the object's own
 * transaction, checked before anything is written), a rename is carried
 * to the links that point at the object, a delete forgets its connections both ways, and
 * `<Href>/connections` and `<Href>/references` list the connected objects.
 *
 * The service loads with the first hook called, with the write side (write-operations.ts): a plain
 * GET of an object calls none.
 */
import type { ObjectHooks } from './domain-context.ts';
import { onFirstUse } from '../first-use.ts';

const relations = onFirstUse(() => import('./write-operations.ts').then((m) => m.relationService));

export const relationHooks: ObjectHooks = Object.freeze<ObjectHooks>({
  beforeWrite: async (ctx, draft, previous) => (await relations()).planObjectLinks(ctx, draft, previous),
  afterWrite: async (ctx, o, previous) => {
    if (previous && previous.doc.CommonName !== o.doc.CommonName) await (await relations()).refreshLinksTo(ctx, o);
  },
  afterDelete: async (ctx, o) => (await relations()).forgetObject(ctx, o),
  connections: async (ctx, o) => (await relations()).connectedObjects(ctx, o),
  references: async (ctx, o) => (await relations()).referencingObjects(ctx, o),
});
