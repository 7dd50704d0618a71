/**
 * The auth repository: every read and write of login state.
 *
 * | item                | PK                 | SK     | GSI1                         | holds |
 * | ------------------- | ------------------ | ------ | ---------------------------- | ----- |
 * | user auth state     | `O#<userKey>`      | `AUTH` |                              | PasswordHash, FailedLogins, LockedUntil, one-time code (hash, salt, expiry, tries) |
 * | refresh token       | `RT#<sha256>`      | `RT`   | `RTF#<family>` / `<issued>`  | Family, UserKey, InstanceKey, ClientId, ExpiresAt, UsedAt |
 * | refresh family      | `RTF#<family>`     | `RT`   |                              | UserKey, ExpiresAt, SessionGeneration (the user's at the login), RevokedAt (reuse detection revokes the whole family at once) |
 * | login name counter  | `LN#<instance>#<sha256 of name>` | `LN` |                              | FailedLogins, LockedUntil, ttl: a name no password logs in as (unknown, or a user without a password), locked like a user |
 *
 * Access patterns:
 * - login: the AUTH item is read (consistent) in one BatchGetItem with the user and its instances;
 *   reserve an attempt slot with one conditional UpdateItem (ADD FailedLogins, condition: not locked
 *   and below the threshold), so a parallel burst of wrong passwords cannot act on more than
 *   `threshold` verdicts; success resets it with one UpdateItem, sent together with the
 *   transaction that stores the login's first refresh token. A name no password can log in as
 *   (at Medium and High security) is counted the same way in its login name counter, read in the
 *   same BatchGetItem as the AUTH item would be, so its attempts lock out like a user's.
 * - refresh: GetItem RT (consistent), then its family, user and instance in one BatchGetItem
 *   (consistent); rotate with one TransactWriteItems (old token: condition not
 *   used; family: condition not revoked; new token: Put), so two parallel refreshes have one winner;
 *   reuse revokes the family with one UpdateItem (the family item is checked in every rotation, so a
 *   revocation cannot miss a token being issued at the same moment). A family whose session
 *   generation is below its user's (read in the same BatchGetItem) is refused: revoking a user's
 *   sessions is one write to the user item, whatever the number of families.
 * Times are epoch seconds (numbers) except where noted; `ttl` lets DynamoDB delete expired items.
 */
import { createHash } from 'node:crypto';
import { GetCommand, UpdateCommand, type TransactWriteCommandInput, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { ConditionFailed } from '../errors.ts';
import type { Db } from './client.ts';
import { AUTH_SK, LOGIN_NAME_SK, REFRESH_SK, loginNamePk, objectPk, refreshFamilyPk, refreshTokenPk } from './item-keys.ts';
import { claimItemKey, fromItem, getItems, objectItemKey, send } from './objects-repo.ts';
import type { Claim, StoredObject } from '../model/stored-object.ts';
import { isTransactionConflict, toItem, transact } from './object-writes.ts';
import { versionCondition } from './requests.ts';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** The login state of one user (the `AUTH` item). */
export interface AuthState {
  readonly userKey: string;
  readonly passwordHash: string | undefined;
  /** Consecutive failed logins (attempts in flight included, see {@link reserveLoginAttempt}). */
  readonly failedLogins: number;
  /** Epoch ms; the user is locked while this is in the future. */
  readonly lockedUntil: number | undefined;
  readonly otp: OtpState | undefined;
}

export interface OtpState {
  /** hex sha256 of salt and code */
  readonly hash: string;
  readonly salt: string;
  /** Epoch ms. */
  readonly expiresAt: number;
  readonly tries: number;
}

const authKey = (userKey: string) => ({ PK: objectPk(userKey), SK: AUTH_SK });
/**
 * A name's counter is keyed by the name's SHA-256, not the name: what was typed as a user name
 * (sometimes a password, in the wrong field) is not kept, and any length fits a key.
 */
const nameKey = (n: LoginName) => ({
  PK: loginNamePk(n.instanceKey, createHash('sha256').update(n.userName, 'utf8').digest('base64url')),
  SK: LOGIN_NAME_SK,
});

/** A name tried in an instance's login, counted when no password can log in as it. */
export interface LoginName {
  readonly instanceKey: string;
  readonly userName: string;
}

/**
 * How long a name's counter is kept after its last failure (epoch seconds from now, as `ttl`):
 * long past any lock, so a name fails and locks as a user does; a user's counter, though, is
 * only reset by a success.
 */
const NAME_COUNTER_TTL_S = 30 * 86_400;

const isConditionFailure = (err: unknown): boolean =>
  (err as { name?: string }).name === 'ConditionalCheckFailedException';

/**
 * An update whose condition may fail because another writer got there first (a lock already
 * set, a counter already at zero): then there is nothing left to do, and that is no error.
 */
async function updateUnlessDone(db: Db, input: UpdateCommandInput): Promise<void> {
  try {
    await send(db, new UpdateCommand(input));
  } catch (err) {
    if (!isConditionFailure(err)) throw err;
  }
}

/**
 * A transaction item that creates (or overwrites) a user's AUTH item with a new password hash,
 * clearing the failed-login counter, any lock and any pending one-time code. Put it in the same
 * transaction as the user object.
 */
export function authItemPut(db: Db, userKey: string, passwordHash: string): TransactItem {
  return {
    Put: {
      TableName: db.tableName,
      Item: { ...authKey(userKey), UserKey: userKey, PasswordHash: passwordHash, FailedLogins: 0, PasswordSetAt: Date.now() },
    },
  };
}

/** A transaction item that deletes a user's AUTH item (with the user object). */
export function authItemDelete(db: Db, userKey: string): TransactItem {
  return { Delete: { TableName: db.tableName, Key: authKey(userKey) } };
}

/** The login state of a user, or undefined when the user has none (no password ever set). */
export async function getAuthState(db: Db, userKey: string): Promise<AuthState | undefined> {
  const out = await send<{ Item?: Record<string, unknown> }>(
    db,
    new GetCommand({ TableName: db.tableName, Key: authKey(userKey), ConsistentRead: true }),
  );
  return out.Item ? authStateOf(userKey, out.Item) : undefined;
}

function authStateOf(userKey: string, i: Record<string, unknown>): AuthState {
  return {
    userKey,
    passwordHash: typeof i.PasswordHash === 'string' ? i.PasswordHash : undefined,
    failedLogins: Number(i.FailedLogins ?? 0),
    lockedUntil: i.LockedUntil === undefined ? undefined : Number(i.LockedUntil),
    otp:
      typeof i.OtpHash === 'string'
        ? {
            hash: i.OtpHash,
            salt: String(i.OtpSalt ?? ''),
            expiresAt: Number(i.OtpExpiresAt ?? 0),
            tries: Number(i.OtpTries ?? 0),
          }
        : undefined,
  };
}

/** What a login reads in one request: objects by key, the owners of claims, and one user's AUTH item. */
export interface LoginReads {
  readonly objects?: readonly string[];
  readonly claims?: readonly Claim[];
  /** The user whose AUTH item is read. */
  readonly authOf?: string;
  /** The name whose counter is read (a login of a name no user has). */
  readonly nameOf?: LoginName;
}

export interface LoginItems {
  object(key: string): StoredObject | undefined;
  owner(claim: Claim): string | undefined;
  /** The AUTH item of `authOf`, when it has one. */
  readonly auth: AuthState | undefined;
  /** Epoch ms: the lock of `nameOf`'s counter, when it has one. */
  readonly nameLockedUntil: number | undefined;
}

/**
 * Reads what a login needs at one step, strongly consistent, in one BatchGetItem: a login's reads
 * depend on one another (a name's claim gives a key), so each step reads everything it can.
 */
export async function readLoginItems(db: Db, reads: LoginReads): Promise<LoginItems> {
  const claims = reads.claims ?? [];
  const keys = [...new Set(reads.objects ?? [])].map(objectItemKey);
  keys.push(...claims.map(claimItemKey));
  if (reads.authOf !== undefined) keys.push(authKey(reads.authOf));
  if (reads.nameOf !== undefined) keys.push(nameKey(reads.nameOf));
  const byKey = new Map<string, Record<string, unknown>>();
  for (const item of await getItems(db, keys, true)) byKey.set(`${String(item.PK)}\u0000${String(item.SK)}`, item);
  const at = (k: { PK: string; SK: string }) => byKey.get(`${k.PK}\u0000${k.SK}`);
  const auth = reads.authOf !== undefined ? at(authKey(reads.authOf)) : undefined;
  const name = reads.nameOf !== undefined ? at(nameKey(reads.nameOf)) : undefined;
  return {
    object: (key) => {
      const item = at(objectItemKey(key));
      return item ? fromItem(item) : undefined;
    },
    owner: (claim) => at(claimItemKey(claim))?.Owner as string | undefined,
    auth: auth ? authStateOf(reads.authOf!, auth) : undefined,
    nameLockedUntil: name?.LockedUntil === undefined ? undefined : Number(name.LockedUntil),
  };
}

/**
 * Clears a lock that has run out (and its counter), if it is still the lock that was read:
 * a newer lock set in between stays.
 */
export async function clearExpiredLock(db: Db, userKey: string, seenLockedUntil: number): Promise<void> {
  await clearLockAt(db, authKey(userKey), seenLockedUntil);
}

/** {@link clearExpiredLock} of a name's counter. */
export async function clearExpiredNameLock(db: Db, name: LoginName, seenLockedUntil: number): Promise<void> {
  await clearLockAt(db, nameKey(name), seenLockedUntil);
}

async function clearLockAt(db: Db, key: { PK: string; SK: string }, seenLockedUntil: number): Promise<void> {
  await updateUnlessDone(db, {
    TableName: db.tableName,
    Key: key,
    UpdateExpression: 'SET FailedLogins = :zero REMOVE LockedUntil',
    ConditionExpression: 'LockedUntil = :seen',
    ExpressionAttributeValues: { ':zero': 0, ':seen': seenLockedUntil },
  });
}

/**
 * Takes one login-attempt slot before the password is checked: atomically adds 1 to the
 * failed-login counter if the user is not locked and the counter is below `threshold`. Returns
 * the new count, or `'locked'` when no slot is left. The caller then either keeps the slot (the
 * attempt failed), gives it back ({@link releaseLoginAttempt}: the attempt neither failed nor
 * completed) or resets the counter ({@link recordLoginSuccess}).
 */
export async function reserveLoginAttempt(db: Db, userKey: string, threshold: number): Promise<number | 'locked'> {
  return reserveAt(db, {
    TableName: db.tableName,
    Key: authKey(userKey),
    UpdateExpression: 'ADD FailedLogins :one',
    ConditionExpression:
      'attribute_exists(PK) AND attribute_not_exists(LockedUntil) AND (attribute_not_exists(FailedLogins) OR FailedLogins < :t)',
    ExpressionAttributeValues: { ':one': 1, ':t': threshold },
    ReturnValues: 'UPDATED_NEW',
  });
}

/**
 * {@link reserveLoginAttempt} for a name no password can log in as: its counter is created by
 * the first attempt and kept a while after the last (`ttl`). Such an attempt always fails, so the
 * slot is never given back.
 */
export async function reserveNameAttempt(db: Db, name: LoginName, threshold: number, nowMs: number): Promise<number | 'locked'> {
  return reserveAt(db, {
    TableName: db.tableName,
    Key: nameKey(name),
    UpdateExpression: 'ADD FailedLogins :one SET #ttl = :ttl',
    ConditionExpression: 'attribute_not_exists(LockedUntil) AND (attribute_not_exists(FailedLogins) OR FailedLogins < :t)',
    ExpressionAttributeNames: { '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':one': 1, ':t': threshold, ':ttl': Math.ceil(nowMs / 1000) + NAME_COUNTER_TTL_S },
    ReturnValues: 'UPDATED_NEW',
  });
}

async function reserveAt(db: Db, input: UpdateCommandInput): Promise<number | 'locked'> {
  try {
    const out = await send<{ Attributes?: Record<string, unknown> }>(db, new UpdateCommand(input));
    return Number(out.Attributes?.FailedLogins ?? 1);
  } catch (err) {
    if (isConditionFailure(err)) return 'locked';
    throw err;
  }
}

/** Gives back a slot taken by {@link reserveLoginAttempt} (the attempt is not a failure). */
export async function releaseLoginAttempt(db: Db, userKey: string): Promise<void> {
  await updateUnlessDone(db, {
    TableName: db.tableName,
    Key: authKey(userKey),
    UpdateExpression: 'ADD FailedLogins :minus',
    ConditionExpression: 'FailedLogins > :zero',
    ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
  });
}

/** Locks the user until `untilMs` (called by the failed attempt that reached the threshold). */
export async function lockUser(db: Db, userKey: string, untilMs: number): Promise<void> {
  await lockAt(db, authKey(userKey), untilMs);
}

/** {@link lockUser} for a name's counter. */
export async function lockName(db: Db, name: LoginName, untilMs: number): Promise<void> {
  await lockAt(db, nameKey(name), untilMs);
}

async function lockAt(db: Db, key: { PK: string; SK: string }, untilMs: number): Promise<void> {
  await updateUnlessDone(db, {
    TableName: db.tableName,
    Key: key,
    UpdateExpression: 'SET LockedUntil = :until',
    ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(LockedUntil)',
    ExpressionAttributeValues: { ':until': untilMs },
  });
}

/** Epoch ms: the lock of a name's counter, or undefined (strongly consistent). */
export async function nameLockedUntil(db: Db, name: LoginName): Promise<number | undefined> {
  const out = await send<{ Item?: Record<string, unknown> }>(
    db,
    new GetCommand({ TableName: db.tableName, Key: nameKey(name), ConsistentRead: true, ProjectionExpression: 'LockedUntil' }),
  );
  return out.Item?.LockedUntil === undefined ? undefined : Number(out.Item.LockedUntil);
}

/**
 * A completed login: the failed-login counter, any lock and the used one-time code are cleared.
 * A plain UpdateItem, like every write of the AUTH item during a login: were one of them in a
 * transaction, DynamoDB would cancel the writes of parallel logins of the same user that meet it
 * (TransactionConflict) instead of applying them one after the other.
 */
export async function recordLoginSuccess(db: Db, userKey: string, nowMs: number): Promise<void> {
  await send(
    db,
    new UpdateCommand({
      TableName: db.tableName,
      Key: authKey(userKey),
      UpdateExpression: 'SET FailedLogins = :zero, LastLoginAt = :now REMOVE LockedUntil, OtpHash, OtpSalt, OtpExpiresAt, OtpTries',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':zero': 0, ':now': nowMs },
    }),
  );
}

/** Stores a newly issued one-time code (replacing any earlier one). */
export async function storeOneTimeCode(db: Db, userKey: string, otp: Omit<OtpState, 'tries'>): Promise<void> {
  await send(
    db,
    new UpdateCommand({
      TableName: db.tableName,
      Key: authKey(userKey),
      UpdateExpression: 'SET OtpHash = :h, OtpSalt = :s, OtpExpiresAt = :e, OtpTries = :zero',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':h': otp.hash, ':s': otp.salt, ':e': otp.expiresAt, ':zero': 0 },
    }),
  );
}

/**
 * Consumes the one-time code whose hash is `hash`: true for exactly one caller (single use even
 * under parallel logins with the same code).
 */
export async function consumeOneTimeCode(db: Db, userKey: string, hash: string): Promise<boolean> {
  try {
    await send(
      db,
      new UpdateCommand({
        TableName: db.tableName,
        Key: authKey(userKey),
        UpdateExpression: 'REMOVE OtpHash, OtpSalt, OtpExpiresAt, OtpTries',
        ConditionExpression: 'OtpHash = :h',
        ExpressionAttributeValues: { ':h': hash },
      }),
    );
    return true;
  } catch (err) {
    if (isConditionFailure(err)) return false;
    throw err;
  }
}

/**
 * Counts a wrong try against the pending code `hash`; after `maxTries` wrong tries the code is
 * discarded. Returns the tries so far (0 when that code is no longer pending).
 */
export async function recordOneTimeCodeFailure(db: Db, userKey: string, hash: string, maxTries: number): Promise<number> {
  let tries: number;
  try {
    const out = await send<{ Attributes?: Record<string, unknown> }>(
      db,
      new UpdateCommand({
        TableName: db.tableName,
        Key: authKey(userKey),
        UpdateExpression: 'ADD OtpTries :one',
        ConditionExpression: 'OtpHash = :h',
        ExpressionAttributeValues: { ':one': 1, ':h': hash },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    tries = Number(out.Attributes?.OtpTries ?? 1);
  } catch (err) {
    if (isConditionFailure(err)) return 0;
    throw err;
  }
  if (tries >= maxTries) await consumeOneTimeCode(db, userKey, hash);
  return tries;
}

/**
 * Sets a new password at login (first login or expired password): the user object is replaced
 * (flags cleared, version-checked, session generation raised: the user's other sessions end) and
 * the AUTH item gets the new hash, in one transaction. Returns the user as stored. Throws
 * {@link ConditionFailed} when the user changed in between.
 */
export async function changePasswordAtLogin(
  db: Db,
  user: StoredObject,
  nextDoc: Record<string, unknown>,
  passwordHash: string,
  nowMs: number,
): Promise<StoredObject> {
  const next: StoredObject = { ...user, version: user.version + 1, doc: nextDoc, sessionGeneration: (user.sessionGeneration ?? 0) + 1 };
  await transact(db, [
    {
      Put: {
        TableName: db.tableName,
        Item: toItem(next),
        ...versionCondition(user.version),
      },
    },
    {
      Update: {
        TableName: db.tableName,
        Key: authKey(user.key),
        UpdateExpression: 'SET PasswordHash = :h, PasswordSetAt = :now',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':h': passwordHash, ':now': nowMs },
      },
    },
  ]);
  return next;
}

// ---------------------------------------------------------------------------------------------
// Refresh tokens

/** One stored refresh token (only its hash is ever stored). */
export interface RefreshRecord {
  /** hex sha256 of the opaque token */
  readonly hash: string;
  /** The login this token descends from. */
  readonly family: string;
  readonly userKey: string;
  readonly instanceKey: string;
  readonly clientId: string;
  /** Epoch ms. */
  readonly issuedAt: number;
  /** Epoch ms: the family's absolute expiry, carried by every token of the family. */
  readonly expiresAt: number;
  /** Epoch ms, set when the token was exchanged. */
  readonly usedAt?: number;
}

export interface RefreshFamily {
  readonly family: string;
  readonly userKey: string;
  readonly expiresAt: number;
  readonly revokedAt?: number;
  /** The user's session generation at the login (absent in families stored before it existed: 0). */
  readonly sessionGeneration: number;
}

const ttlOf = (expiresAtMs: number) => Math.ceil(expiresAtMs / 1000) + 86400;

function refreshItem(r: RefreshRecord): Record<string, unknown> {
  return {
    PK: refreshTokenPk(r.hash),
    SK: REFRESH_SK,
    GSI1PK: refreshFamilyPk(r.family),
    GSI1SK: new Date(r.issuedAt).toISOString(),
    Family: r.family,
    UserKey: r.userKey,
    InstanceKey: r.instanceKey,
    ClientId: r.clientId,
    IssuedAt: r.issuedAt,
    ExpiresAt: r.expiresAt,
    ttl: ttlOf(r.expiresAt),
  };
}

const familyKey = (family: string) => ({ PK: refreshFamilyPk(family), SK: REFRESH_SK });

/**
 * Stores the first refresh token of a new login together with its family, which keeps the user's
 * session generation of the login: a refresh is refused once the user's is higher.
 */
export async function createRefreshFamily(db: Db, first: RefreshRecord, sessionGeneration: number): Promise<void> {
  await transact(db, [
    {
      Put: {
        TableName: db.tableName,
        Item: {
          ...familyKey(first.family),
          Family: first.family,
          UserKey: first.userKey,
          ExpiresAt: first.expiresAt,
          SessionGeneration: sessionGeneration,
          ttl: ttlOf(first.expiresAt),
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    { Put: { TableName: db.tableName, Item: refreshItem(first), ConditionExpression: 'attribute_not_exists(PK)' } },
  ]);
}

export async function getRefreshToken(db: Db, hash: string): Promise<RefreshRecord | undefined> {
  const out = await send<{ Item?: Record<string, unknown> }>(
    db,
    new GetCommand({ TableName: db.tableName, Key: { PK: refreshTokenPk(hash), SK: REFRESH_SK }, ConsistentRead: true }),
  );
  const i = out.Item;
  if (!i) return undefined;
  return {
    hash,
    family: String(i.Family),
    userKey: String(i.UserKey),
    instanceKey: String(i.InstanceKey),
    clientId: String(i.ClientId),
    issuedAt: Number(i.IssuedAt),
    expiresAt: Number(i.ExpiresAt),
    ...(i.UsedAt !== undefined ? { usedAt: Number(i.UsedAt) } : {}),
  };
}

function refreshFamilyOf(family: string, i: Record<string, unknown>): RefreshFamily {
  return {
    family,
    userKey: String(i.UserKey),
    expiresAt: Number(i.ExpiresAt),
    ...(i.RevokedAt !== undefined ? { revokedAt: Number(i.RevokedAt) } : {}),
    sessionGeneration: Number(i.SessionGeneration ?? 0),
  };
}

/**
 * What a refresh reads once its token is found, strongly consistent, in one BatchGetItem: the
 * token's family, its user and its instance.
 */
export async function readRefreshItems(
  db: Db,
  token: Pick<RefreshRecord, 'family' | 'userKey' | 'instanceKey'>,
): Promise<{ readonly family: RefreshFamily | undefined; object(key: string): StoredObject | undefined }> {
  const items = await getItems(db, [familyKey(token.family), ...[...new Set([token.userKey, token.instanceKey])].map(objectItemKey)], true);
  const fam = items.find((i) => i.PK === familyKey(token.family).PK && i.SK === REFRESH_SK);
  const objects = new Map(items.filter((i) => i.SK !== REFRESH_SK).map((i) => [String(i.Key), fromItem(i)]));
  return { family: fam ? refreshFamilyOf(token.family, fam) : undefined, object: (key) => objects.get(key) };
}

/**
 * Exchanges `old` for `next` in one transaction: the old token must be unused, the family not
 * revoked. Returns false when another exchange of the same token won (or the family was revoked).
 */
export async function rotateRefreshToken(db: Db, old: RefreshRecord, next: RefreshRecord, nowMs: number): Promise<boolean> {
  try {
    await transact(db, [
      {
        Update: {
          TableName: db.tableName,
          Key: { PK: refreshTokenPk(old.hash), SK: REFRESH_SK },
          UpdateExpression: 'SET UsedAt = :now',
          ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(UsedAt)',
          ExpressionAttributeValues: { ':now': nowMs },
        },
      },
      {
        ConditionCheck: {
          TableName: db.tableName,
          Key: familyKey(old.family),
          ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(RevokedAt)',
        },
      },
      { Put: { TableName: db.tableName, Item: refreshItem(next), ConditionExpression: 'attribute_not_exists(PK)' } },
    ]);
    return true;
  } catch (err) {
    if (err instanceof ConditionFailed) return false;
    // DynamoDB may cancel one of two simultaneous transactions on the same token with
    // TransactionConflict instead of a failed condition: that is the same lost race.
    if (isTransactionConflict(err)) return false;
    throw err;
  }
}

/** Revokes every refresh token of a login, issued or still to be issued. */
export async function revokeRefreshFamily(db: Db, family: string, nowMs: number): Promise<void> {
  await updateUnlessDone(db, {
    TableName: db.tableName,
    Key: familyKey(family),
    UpdateExpression: 'SET RevokedAt = :now',
    ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(RevokedAt)',
    ExpressionAttributeValues: { ':now': nowMs },
  });
}

