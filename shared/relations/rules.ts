/**
 * The relation kinds of the spec: which collection may connect to which, and whether a source
 * holds at most one target of that kind. "Downstream" is any peripheral: reader, input, output,
 * input scanner. The table decides one-to-one; a client's `isOneToOne` cannot override it.
 */

export interface RelationRule {
  readonly relation: string;
  readonly from: readonly string[];
  readonly to: string;
  readonly oneToOne: boolean;
}

const DOWNSTREAM = ['readers', 'inputs', 'outputs', 'inputscanners'] as const;

/** A person's access level with a validity window (ActiveOn, ExpiresOn): see `window.ts`. */
export const SCHEDULED_ACCESS_LEVEL = 'ScheduledAccessLevel';

const RELATIONS: readonly RelationRule[] = [
  { relation: 'AccessLevel', from: ['people'], to: 'accesslevels', oneToOne: false },
  { relation: SCHEDULED_ACCESS_LEVEL, from: ['people'], to: 'accesslevels', oneToOne: false },
  { relation: 'BadgeType', from: ['people'], to: 'badgetypes', oneToOne: true },
  { relation: 'Schedule', from: ['accesslevels'], to: 'schedules', oneToOne: false },
  { relation: 'Reader', from: ['accesslevels'], to: 'readers', oneToOne: false },
  { relation: 'Controller', from: DOWNSTREAM, to: 'controllers', oneToOne: true },
  { relation: 'Door', from: ['readers'], to: 'doors', oneToOne: true },
];

const byName = new Map(RELATIONS.map((r) => [r.relation.toLowerCase(), r]));

/** The rule of a relation name (case-insensitive, as paths are), or undefined. */
export function relationRule(name: string): RelationRule | undefined {
  return byName.get(name.toLowerCase());
}

/** True when `relation` is one of the relation kinds (ObjectLinks of other relations are kept as sent). */
export function isRelationKind(name: unknown): name is string {
  return typeof name === 'string' && byName.has(name.toLowerCase());
}
