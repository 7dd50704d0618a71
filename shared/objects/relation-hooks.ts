/**
 * The relationships issue's work around the object calls (see `shared/relations/service.ts`):
 * relation-kind ObjectLinks sent with a create or replace become connections (in the object's own
 * transaction, checked before anything is written), a rename is carried
 * to the links that point at the object, a delete forgets its connections both ways, and
 * `<Href>/connections` and `<Href>/references` list the connected objects.
 */
import { connectedObjects, forgetObject, planObjectLinks, referencingObjects, refreshLinksTo } from '../relations/service.ts';
import type { ObjectHooks } from './hooks.ts';

export const relationHooks: ObjectHooks = Object.freeze<ObjectHooks>({
  beforeWrite: (ctx, draft, previous) => planObjectLinks(ctx, draft, previous),
  afterWrite: async (ctx, o, previous) => {
    if (previous && previous.doc.CommonName !== o.doc.CommonName) await refreshLinksTo(ctx, o);
  },
  afterDelete: (ctx, o) => forgetObject(ctx, o),
  connections: (ctx, o) => connectedObjects(ctx, o),
  references: (ctx, o) => referencingObjects(ctx, o),
});
