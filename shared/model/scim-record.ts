/**
 * What a person provisioned through SCIM keeps of its directory identity, in its own document
 * (field `Scim`): the SCIM `userName` and `externalId`, whether the directory has it active, and
 * which of its cards deactivation disabled (so reactivation re-enables exactly those, never a
 * card an operator disabled). Kept in the document, not beside it: a change of it is an ordinary
 * change of the person (one transaction with its claims, audited, live, in webhooks). Pure.
 */

/** The person field that holds the record. */
export const SCIM_FIELD = 'Scim';

export interface ScimRecord {
  readonly UserName?: string;
  readonly ExternalId?: string;
  /** Absent: active (a person created outside SCIM is). */
  readonly Active?: boolean;
  /** Keys of the cards that deactivation disabled. */
  readonly DeactivatedCardKeys?: readonly string[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The SCIM record of a person's document (an empty one when it has none). */
export function scimRecordOf(doc: Readonly<Record<string, unknown>>): ScimRecord {
  const r = doc[SCIM_FIELD];
  if (!isRecord(r)) return {};
  return {
    ...(typeof r.UserName === 'string' && r.UserName !== '' ? { UserName: r.UserName } : {}),
    ...(typeof r.ExternalId === 'string' && r.ExternalId !== '' ? { ExternalId: r.ExternalId } : {}),
    ...(typeof r.Active === 'boolean' ? { Active: r.Active } : {}),
    ...(Array.isArray(r.DeactivatedCardKeys) ? { DeactivatedCardKeys: r.DeactivatedCardKeys.filter((k): k is string => typeof k === 'string') } : {}),
  };
}
