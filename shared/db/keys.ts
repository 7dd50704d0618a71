/**
 * Key builders: the only place that knows how item keys are spelled. Pure functions, unit-tested.
 *
 * | item                 | PK                               | SK                      | GSI1 (PK / SK)                         | GSI2 (PK / SK)                |
 * | -------------------- | -------------------------------- | ----------------------- | -------------------------------------- | ----------------------------- |
 * | object               | `O#<key>`                        | `A`                     | `C#<folder>#<collection>` / `<key>`    | `T#<instance>#<Type>` / `<key>` |
 * | object auth state    | `O#<userKey>`                    | `AUTH`                  |                                        |                               |
 * | input status         | `O#<inputKey>`                   | `STATUS`                |                                        |                               |
 * | connection (relation)| `O#<fromKey>`                    | `R#<relation>#<toKey>`  | `RB#<toKey>` / `<relation>#<fromKey>`  |                               |
 * | unique claim         | `U#<scope>#<kind>#<value>`       | `U`                     |                                        |                               |
 * | refresh token        | `RT#<sha256 of token>`           | `RT`                    | `RTF#<login family>` / `<issued>`      |                               |
 * | event pointer        | `EP#<objectKey>`                 | `<occurredOn>#<eventKey>` |                                      |                               |
 * | ws connection        | `WSC#<connectionId>`             | `C`                     |                                        |                               |
 * | ws subscription      | `SUB#<instanceKey>`              | `<connectionId>#<topic>`|                                        |                               |
 *
 * Events are objects (PK `O#<eventKey>`, SK `A`) whose GSI1 is `EV#<folder>` / `<occurredOn>#<key>`.
 */

export const OBJECT_SK = 'A';
export const AUTH_SK = 'AUTH';
export const STATUS_SK = 'STATUS';

export const objectPk = (key: string): string => `O#${key}`;
export const collectionPk = (folderKey: string, collection: string): string => `C#${folderKey}#${collection}`;
export const typePk = (instanceKey: string, typeName: string): string => `T#${instanceKey}#${typeName}`;

export const relationSk = (relation: string, toKey: string): string => `R#${relation}#${toKey}`;
export const relationPrefix = (relation?: string): string => (relation ? `R#${relation}#` : 'R#');
export const referencedByPk = (toKey: string): string => `RB#${toKey}`;

/** Unique claims: card numbers, names, monikers. `value` is case-normalised by the caller if needed. */
export const claimPk = (scope: string, kind: string, value: string): string => `U#${scope}#${kind}#${value}`;
export const CLAIM_SK = 'U';

export const refreshTokenPk = (tokenHash: string): string => `RT#${tokenHash}`;
export const REFRESH_SK = 'RT';
export const refreshFamilyPk = (familyId: string): string => `RTF#${familyId}`;

export const eventFolderPk = (folderKey: string): string => `EV#${folderKey}`;
export const eventSortKey = (occurredOnIso: string, eventKey: string): string => `${occurredOnIso}#${eventKey}`;
export const eventPointerPk = (objectKey: string): string => `EP#${objectKey}`;

export const wsConnectionPk = (connectionId: string): string => `WSC#${connectionId}`;
export const WS_CONNECTION_SK = 'C';
export const subscriptionPk = (instanceKey: string): string => `SUB#${instanceKey}`;
export const subscriptionSk = (connectionId: string, topic: string): string => `${connectionId}#${topic}`;

/** Object keys are 24 lower-case hex digits (ObjectIds). */
export const OBJECT_KEY = /^[0-9a-f]{24}$/;
export const isObjectKey = (s: unknown): s is string => typeof s === 'string' && OBJECT_KEY.test(s);
