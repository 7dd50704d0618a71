/**
 * "Sign out everywhere" (`POST <user Href>/revokesessions`): see the sessions note in
 * `accounts.ts` for what a user's session generation is and who checks it.
 */
import type { Locator } from './tenant-scope.ts';
import { editAt } from './collection.ts';
import type { Ctx } from './domain-context.ts';
import { objectNotFound } from './object-errors.ts';

/**
 * Raises the session generation of the user a path names: one GetItem, then one version-checked
 * write of the user item (its ConcurrencyVersion goes up, as for a PUT). Administrators of the
 * user's instance or an ancestor (403 otherwise, 403/404 for paths as every object call).
 */
export async function revokeSessionsAt(ctx: Ctx, loc: Locator): Promise<void> {
  if (loc.kind !== 'member' || loc.collection !== 'users') throw objectNotFound();
  await editAt(ctx, loc, (cur) => ({ doc: cur.doc, result: undefined, revokeSessions: true }));
}
