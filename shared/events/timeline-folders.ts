/**
 * The folders an events listing (or a webhook replay) reads: a folder, its sub-folders and its
 * child instances, breadth first. Kept apart from `list.ts` so that code reading timelines without
 * the list's query language (webhook replay) does not bundle the search engine.
 */
import { ApiError } from '../errors.ts';
import { listCollection } from '../db/objects-repo.ts';
import { readSteps, type Ctx, type ReadStep } from '../objects/domain-context.ts';

/** Folders one listing may merge. */
const MAX_FOLDERS = 1_000;

const tooBroad = (what: string) => new ApiError(400, 'QueryTooBroad', `The events query ${what}: narrow it with startingOn/endingOn or fewer folders.`);

/** Every folder key whose timeline a listing reads, the listed folder first. */
export async function foldersOf(
  ctx: Ctx,
  folderKey: string,
  q: { readonly includeSubFolders: boolean; readonly spanScope: boolean },
  step: ReadStep = readSteps(ctx),
): Promise<string[]> {
  const out = [folderKey];
  const seen = new Set(out);
  const add = (k: string) => {
    if (seen.has(k)) return;
    if (seen.size >= MAX_FOLDERS) throw tooBroad(`spans more than ${MAX_FOLDERS} folders`);
    seen.add(k);
    out.push(k);
  };
  const children = async (parent: string, collection: string): Promise<string[]> => {
    const keys: string[] = [];
    let after: string | undefined;
    do {
      await step();
      const page = await listCollection(ctx.db, parent, collection, 1000, after);
      keys.push(...page.items.map((o) => o.key));
      after = page.nextStart;
    } while (after);
    return keys;
  };
  for (let i = 0; i < out.length; i++) {
    const parent = out[i]!;
    const [instances, folders] = await Promise.all([
      q.spanScope ? children(parent, 'instances') : Promise.resolve([]),
      q.includeSubFolders ? children(parent, 'folders') : Promise.resolve([]),
    ]);
    [...instances, ...folders].forEach(add);
  }
  return out;
}
