/**
 * The troubleshooting calls: who can pass a reader at an instant, and which readers a person can
 * pass. Both decide with the engine itself, each card of a person as if read with its own PIN, so
 * they answer what a card read would.
 *
 * `GET readers/<key>/whocanpass?at=&page=&pageSize=` walks the people holding the reader's levels
 * through the reverse side of their connections (GSI1 `RB#<level>` / `<relation>#<person>`: one
 * item per person and level), level after level (key order), `AccessLevel` then
 * `ScheduledAccessLevel`: a page reads pageSize connection items and one BatchGetItem of their
 * people, so its read units are O(pageSize), whatever the number of people. The position after
 * each page is kept (5 minutes) so page N+1 starts where page N ended; a page whose start is not
 * kept skips the connections before it reading keys only. A page lists the rows of its people who
 * would be granted (a page may hold fewer rows than pageSize: the others would be denied).
 */
import { connectedToPage } from '../db/access-reads.ts';
import { getObjects, ownInstance } from '../db/objects-repo.ts';
import { cardsWithKeys, type Card } from '../model/card-assignments.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { locate } from '../objects/tenant-scope.ts';
import type { Ctx } from '../objects/domain-context.ts';
import { SCHEDULED_ACCESS_LEVEL } from '../relations/rules.ts';
import { TtlCache } from '../ttl-cache.ts';
import type { Decision, HolidayDay, LevelGrant } from './decision.ts';
import { inCallerScope, readerIn } from './decisions.ts';
import { decide } from './engine.ts';
import { factsWithState, readerState, statesOf } from './reader-state.ts';
import { cardFacts, grantsAt, levelsAtReader, loadHolidays, loadLevels, loadReader, loadSchedules, personLevels, readerKeysOf, refOf, scheduleKeysAt, type LoadedReader } from './facts.ts';

const RELATIONS = ['AccessLevel', SCHEDULED_ACCESS_LEVEL] as const;

/** Where a page of holders starts: the level (index), the relation (index), after which person. */
interface Position {
  readonly level: number;
  readonly relation: number;
  readonly after: string | undefined;
}

const positions = new TtlCache<Position | null>(10_000, 5 * 60_000);

/** The first card of `person` the engine would grant at the reader under `grants`, with its decision. */
function grantedCard(loaded: LoadedReader, person: StoredObject, grants: readonly LevelGrant[], holidays: readonly HolidayDay[], at: Date): { card: Card; decision: Decision } | undefined {
  for (const card of cardsWithKeys(person.key, person.doc)) {
    const facts = cardFacts(person, card);
    const decision = decide({ at, reader: loaded.facts, lookup: { card: facts }, pinCode: facts.pinCode, grants, holidays });
    if (decision.granted) return { card, decision };
  }
  return undefined;
}

const cardRef = (card: Card) => ({ Key: card.Key as string, DisplayCardNumber: typeof card.DisplayCardNumber === 'string' ? card.DisplayCardNumber : null });

/** One holder row of a level: a person, the level's window for it. */
interface Holder {
  readonly person: string;
  readonly level: number;
  readonly window: LevelGrant['window'];
}

/** `GET readers/<key>/whocanpass`: one page of `{ Person, Card, AccessLevel, Schedule }`. */
export async function whoCanPass(ctx: Ctx, folderKey: string, readerKey: string, at: Date, page: number, pageSize: number): Promise<unknown[]> {
  const found = await readerIn(ctx, folderKey, readerKey);
  // The reader's set mode and the lockdowns above it (doors issue), as a decision sees them.
  const [levels, holidays, state] = await Promise.all([levelsAtReader(ctx, found), loadHolidays(ctx, found.reader.instances), readerState(ctx, found)]);
  const loaded: LoadedReader = { ...found, facts: factsWithState(found.facts, state, at) };
  const rules = await loadSchedules(
    ctx,
    levels.flatMap((l) => scheduleKeysAt(l, loaded.reader.key)),
  );
  const cursorId = (n: number) => [ctx.db.tableName, loaded.reader.key, levels.map((l) => l.level.key).join(','), pageSize, n].join('\u0000');
  // Where this page starts: kept from the page before, else after skipping page × pageSize holders.
  let pos: Position | null | undefined = page === 0 ? { level: 0, relation: 0, after: undefined } : positions.get(cursorId(page));
  if (pos === undefined) pos = (await walk(ctx, levels, { level: 0, relation: 0, after: undefined }, page * pageSize, false)).next;
  const { holders, next } = pos ? await walk(ctx, levels, pos, pageSize, true) : { holders: [], next: null };
  positions.set(cursorId(page + 1), next);
  const people = new Map((await getObjects(ctx.db, [...new Set(holders.map((h) => h.person))])).map((p) => [p.key, p]));
  const rows: unknown[] = [];
  for (const h of holders) {
    const person = people.get(h.person);
    // Only people whose cards a read at this reader finds (its instance chain), and whom the caller may see.
    if (!person || person.collection !== 'people' || !loaded.reader.instances.includes(ownInstance(person)) || !inCallerScope(ctx, person)) continue;
    const level = levels[h.level]!;
    const grant: LevelGrant = {
      level: refOf(level.level),
      window: h.window,
      schedules: scheduleKeysAt(level, loaded.reader.key)
        .map((k) => rules.get(k))
        .filter((s) => s !== undefined),
    };
    const granted = grantedCard(loaded, person, [grant], holidays, at);
    if (granted) rows.push({ Person: refOf(person), Card: cardRef(granted.card), AccessLevel: granted.decision.accessLevel, Schedule: granted.decision.schedule });
  }
  return rows;
}

/**
 * Reads `count` holders from `start` on (level after level, relation after relation), in pages of
 * at most `count` connection items; `keep` false reads them only to skip them. `next`: where the
 * following holders start, null at the end.
 */
async function walk(ctx: Ctx, levels: readonly { level: StoredObject }[], start: Position, count: number, keep: boolean): Promise<{ holders: Holder[]; next: Position | null }> {
  const holders: Holder[] = [];
  let { level, relation, after } = start;
  let left = count;
  while (level < levels.length) {
    if (left === 0) return { holders, next: { level, relation, after } };
    const rel = RELATIONS[relation]!;
    const got = await connectedToPage(ctx.db, levels[level]!.level.key, rel, Math.min(left, 1000), after);
    left -= got.holders.length;
    if (keep) {
      for (const h of got.holders) holders.push({ person: h.from, level, window: rel === SCHEDULED_ACCESS_LEVEL ? { activeOn: h.activeOn, expiresOn: h.expiresOn } : null });
    }
    if (got.next !== undefined) {
      after = got.next;
      continue;
    }
    after = undefined;
    relation += 1;
    if (relation === RELATIONS.length) {
      relation = 0;
      level += 1;
    }
  }
  return { holders, next: null };
}

/** `GET people/<key>/accessiblereaders`: `{ Reader, Door, AccessLevel, Schedule }` of each reader the person can pass at `at`. */
export async function accessibleReaders(ctx: Ctx, folderKey: string, personKey: string, at: Date): Promise<unknown[]> {
  const person = await locate(ctx, { kind: 'member', collection: 'people', folderKey, key: personKey });
  const mine = personLevels(person);
  const levels = await loadLevels(
    ctx,
    mine.map((l) => l.key),
  );
  const readerKeys = [...new Set([...levels.values()].flatMap(readerKeysOf))].sort();
  const readers = (await Promise.all(readerKeys.map((k) => loadReader(ctx, k)))).filter(
    // A reader finds the person's cards only when the person's instance is in its chain.
    (r): r is LoadedReader => r !== null && inCallerScope(ctx, r.reader) && r.reader.instances.includes(ownInstance(person)),
  );
  const states = await statesOf(
    ctx,
    readers.map((r) => r.reader),
  );
  const rows = await Promise.all(
    readers.map(async (r) => {
      const [{ grants }, holidays] = await Promise.all([grantsAt(ctx, mine, r.reader.key), loadHolidays(ctx, r.reader.instances)]);
      const granted = grantedCard({ ...r, facts: factsWithState(r.facts, states.of(r.reader), at) }, person, grants, holidays, at);
      return granted ? { Reader: r.facts.ref, Door: r.facts.door, AccessLevel: granted.decision.accessLevel, Schedule: granted.decision.schedule } : undefined;
    }),
  );
  return rows.filter((x) => x !== undefined);
}
