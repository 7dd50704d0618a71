/**
 * The token service: the password grant (with lockout, two-factor, first-login and expired
 * passwords, security levels and licences) and the refresh grant (rotation with reuse detection).
 *
 * Security levels decide how much a failed login tells:
 *
 * | condition          | Low                | Medium             | High          |
 * | ------------------ | ------------------ | ------------------ | ------------- |
 * | unknown user       | user_notfound      | invalid_grant      | invalid_grant |
 * | wrong password     | incorrect_password | invalid_grant      | invalid_grant |
 * | user disabled      | user_disabled      | user_disabled      | invalid_grant |
 * | user locked out    | user_lockedout     | user_lockedout     | invalid_grant |
 *
 * At Medium and High an unknown name (or a user without a password) is locked out like a user:
 * its failed attempts are counted in the same way (auth-repo.ts, the login name counter), so the
 * threshold's next attempt answers `user_lockedout` at Medium whether or not the name exists.
 *
 * Every other error (instance, licence, client, grant, two-factor, new/expired password and
 * password rules) is answered at every level. Every path that gets as far as a user name spends
 * exactly one scrypt (a dummy hash for unknown users and passwordless users; a locked user's or
 * an attempt refused for want of a slot waits for its own verdict and discards it), so timing
 * does not tell them apart either. Before all of it, the login throttle (login-throttle.ts, in the
 * token function) answers 429 to a client address or a name over its rate.
 */
import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { ConditionFailed } from '../errors.ts';
import { claimOwner, getObject, ownInstance } from '../db/objects-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import {
  changePasswordAtLogin,
  clearExpiredLock,
  clearExpiredNameLock,
  consumeOneTimeCode,
  createRefreshFamily,
  getAuthState,
  getRefreshToken,
  lockName,
  lockUser,
  nameLockedUntil,
  readLoginItems,
  readRefreshItems,
  recordLoginSuccess,
  recordOneTimeCodeFailure,
  releaseLoginAttempt,
  reserveLoginAttempt,
  reserveNameAttempt,
  revokeRefreshFamily,
  rotateRefreshToken,
  storeOneTimeCode,
  type AuthState,
  type LoginName,
  type RefreshRecord,
} from '../db/auth-repo.ts';
import { instanceNameClaim, userNameClaim } from '../model/claims.ts';
import type { CoreDeps } from '../core-deps.ts';
import { TtlCache } from '../ttl-cache.ts';
import { issueAccessToken, newFamilyId, newRefreshToken, refreshTokenHash, type TokenSubject } from './access-tokens.ts';
import {
  ancestorKeys,
  ancestorsIn,
  ancestorsOf,
  instanceNamed,
  isDisabled,
  isInstance,
  isUser,
  nameOf,
  roleOf,
  securityLevelOf,
  userNamed,
  type SecurityLevel,
} from './directory.ts';
import { describeViolation, hashPassword, passwordRuleViolation, verifyAgainstDummy, verifyPassword } from './passwords.ts';
import { splitLoginName, tokenError, type TokenRequest } from './token-request.ts';
import { licenseVerifierFor, type LicenseVerifier } from './licenses.ts';

/** True for a user linked to an identity provider: no password logs it in. */
const signsInThroughProvider = (user: StoredObject): boolean =>
  typeof user.doc.IdentityProviderKey === 'string' && user.doc.IdentityProviderKey !== '';

/** One-time codes: 6 digits, valid 10 minutes, at most 5 wrong tries. */
const OTP_DIGITS = 6;
const OTP_VALID_MS = 10 * 60 * 1000;
const OTP_MAX_TRIES = 5;

/** The success body of `POST /token`, fields as in the spec. */
export interface TokenResponse {
  readonly userName: string;
  readonly access_token: string;
  readonly 'as:client_id'?: string;
  readonly token_type: 'bearer';
  readonly refresh_token: string;
  readonly expires_in: number;
  readonly '.issued': string;
  readonly '.expires': string;
  readonly instance: string;
}

const invalidGrant = () => tokenError('invalid_grant', 'The user name or password is incorrect.');

function unknownUser(level: SecurityLevel) {
  return level === 'Low' ? tokenError('user_notfound', 'The user does not exist.') : invalidGrant();
}
function wrongPassword(level: SecurityLevel) {
  return level === 'Low' ? tokenError('incorrect_password', 'The password is incorrect.') : invalidGrant();
}
function disabledUser(level: SecurityLevel) {
  return level === 'High' ? invalidGrant() : tokenError('user_disabled', 'The user is disabled.');
}
/** How long an attempt waits for a login slot held by attempts in flight, and how often it looks. */
const SLOT_WAIT_MS = 5_000;
const SLOT_POLL_MS = 100;

function lockedOut(level: SecurityLevel, minutes: number) {
  return level === 'High'
    ? invalidGrant()
    : tokenError('user_lockedout', `The user is locked out after too many failed logins; try again in ${minutes} minutes.`);
}

/** The licence verifier of a configuration, made once (only logins check licences: this function's). */
const verifiers = new WeakMap<CoreDeps['config'], LicenseVerifier>();
function licensesOf(config: CoreDeps['config']): LicenseVerifier {
  let v = verifiers.get(config);
  if (!v) verifiers.set(config, (v = licenseVerifierFor(config)));
  return v;
}

/**
 * The instance a login or refresh goes to, checked: it exists, neither it nor an instance above
 * it (`above`, nearest first) is disabled, and it or its nearest ancestor with a licence holds a
 * valid one.
 */
async function checkInstance(deps: CoreDeps, instance: StoredObject, above: readonly StoredObject[]): Promise<void> {
  if (isDisabled(instance) || above.some(isDisabled)) throw tokenError('instance_disabled', 'The instance is disabled.');
  const holder = [instance, ...above].find((o) => typeof o.doc.License === 'string' && o.doc.License.trim() !== '');
  if (!holder) throw tokenError('instance_missing_license', 'The instance has no valid license.');
  const status = await licensesOf(deps.config).check(holder.doc.License as string, holder.key, deps.now());
  switch (status.state) {
    case 'valid':
      return;
    case 'tampered':
      throw tokenError('instance_license_tampered', 'The license of the instance is not validly signed.');
    case 'other_instance':
      throw tokenError('instance_missing_license', 'The instance has no valid license.');
    case 'expired':
      throw tokenError('instance_license_expired', status.claims.trial ? 'The trial license has expired.' : 'The license has expired.');
  }
}

function otpHash(salt: string, code: string): string {
  return createHash('sha256').update(`${salt}:${code}`, 'utf8').digest('hex');
}

function hexEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ba.length === bb.length && ba.length > 0 && timingSafeEqual(ba, bb);
}

/** Why a password must be replaced now, if it must. */
function passwordChangeReason(user: StoredObject, now: Date): 'new_password_required' | 'password_expired' | undefined {
  if (user.doc.MustChangePassword === true) return 'new_password_required';
  const exp = user.doc.PasswordExpiresOn;
  if (typeof exp === 'string' && exp !== '') {
    const t = Date.parse(exp);
    if (!Number.isNaN(t) && t <= now.getTime()) return 'password_expired';
  }
  return undefined;
}

/** What a login reads before the password check. */
interface LoginTarget {
  /** Undefined: no instance of that name. */
  readonly instance: StoredObject | undefined;
  /** The instances above it, nearest first. */
  readonly above: StoredObject[];
  /** Undefined: no user of that name in the instance. */
  readonly user: StoredObject | undefined;
  readonly auth: AuthState | undefined;
  /** The lock of the name's counter, when it was read with the rest (only when no user has the name). */
  readonly name?: { readonly lockedUntil: number | undefined };
}

/**
 * The keys a completed login found by name, per execution environment: hints that let the next
 * login of the same user read everything it needs in one request instead of three. A hint is
 * never trusted: the objects read with it must still carry the names asked for (the names'
 * claims make them unique), else the names are looked up again. Only completed logins leave one.
 */
const loginHints = new TtlCache<{ readonly instanceKey: string; readonly above: readonly string[]; readonly userKey: string }>(10_000, 60 * 60_000);
const hintId = (deps: CoreDeps, instanceName: string, userName: string) => `${deps.db.tableName}\u0000${instanceName}\u0000${userName}`;

/**
 * Finds the instance, the instances above it, the user and its AUTH item of a login, strongly
 * consistent. By name, the reads depend on one another (a name's claim gives a key): the instance
 * name's claim; the instance with the user name's claim; the instances above, the user and its
 * AUTH item, each one request. With a hint of an earlier login, one request.
 */
async function lookUpLogin(deps: CoreDeps, instanceName: string, userName: string): Promise<LoginTarget> {
  const { db } = deps;
  const hint = userName ? loginHints.get(hintId(deps, instanceName, userName)) : undefined;
  if (hint) {
    const read = await readLoginItems(db, { objects: [hint.instanceKey, ...hint.above, hint.userKey], authOf: hint.userKey });
    const instance = instanceNamed(read.object(hint.instanceKey), instanceName);
    const user = instance ? userNamed(read.object(hint.userKey), instance.key, userName) : undefined;
    if (instance && user) return { instance, above: ancestorsIn(instance, read.object), user, auth: read.auth };
    loginHints.delete(hintId(deps, instanceName, userName));
  }
  const instanceKey = await claimOwner(db, instanceNameClaim(instanceName), true);
  if (!instanceKey) return { instance: undefined, above: [], user: undefined, auth: undefined };
  const userClaim = userName ? userNameClaim(instanceKey, userName) : undefined;
  const first = await readLoginItems(db, { objects: [instanceKey], claims: userClaim ? [userClaim] : [] });
  const instance = instanceNamed(first.object(instanceKey), instanceName);
  if (!instance) return { instance: undefined, above: [], user: undefined, auth: undefined };
  const userKey = userClaim ? first.owner(userClaim) : undefined;
  // No user of that name: its counter is read instead of an AUTH item (the same one request).
  const nameOf = userKey ? undefined : { instanceKey: instance.key, userName };
  const second = await readLoginItems(db, { objects: [...ancestorKeys(instance), ...(userKey ? [userKey] : [])], authOf: userKey, nameOf });
  const user = userKey ? userNamed(second.object(userKey), instance.key, userName) : undefined;
  return {
    instance,
    above: ancestorsIn(instance, second.object),
    user,
    auth: user ? second.auth : undefined,
    ...(nameOf ? { name: { lockedUntil: second.nameLockedUntil } } : {}),
  };
}

/**
 * Starts reading the signing key as soon as a grant may succeed, beside the grant's own reads and
 * password check: in AWS the first read of an environment (and one per key-cache lifetime) is a
 * Secrets Manager call, which would otherwise wait for all of them. The key store keeps the read
 * in flight for the signature to await; a failure here is met again (and answered) there.
 */
function prefetchSigningKey(deps: CoreDeps): void {
  deps.keys.signingKey(deps.now()).catch(() => undefined);
}

/** The failed-login counter an attempt takes a slot of: a user's AUTH item, or a name's counter. */
interface AttemptCounter {
  clearExpiredLock(seen: number): Promise<void>;
  reserve(threshold: number): Promise<number | 'locked'>;
  isLocked(): Promise<boolean>;
}

const userAttempts = (db: CoreDeps['db'], userKey: string): AttemptCounter => ({
  clearExpiredLock: (seen) => clearExpiredLock(db, userKey, seen),
  reserve: (threshold) => reserveLoginAttempt(db, userKey, threshold),
  isLocked: async () => (await getAuthState(db, userKey))?.lockedUntil !== undefined,
});

const nameAttempts = (db: CoreDeps['db'], name: LoginName, nowMs: number): AttemptCounter => ({
  clearExpiredLock: (seen) => clearExpiredNameLock(db, name, seen),
  reserve: (threshold) => reserveNameAttempt(db, name, threshold, nowMs),
  isLocked: async () => (await nameLockedUntil(db, name)) !== undefined,
});

/**
 * Takes an attempt's slot of `counter` while its password check (`check`, already running) goes
 * on: a lock still running answers at once (after the check, so it costs the same time), one
 * run out is cleared. Parallel attempts cannot act on more verdicts than the threshold: with no
 * slot but no lock either, the slots are held by attempts still being checked, which may well
 * succeed, so this one waits for them (bounded) instead of calling itself locked out. Every path
 * awaits the check, so each attempt spends exactly one scrypt.
 */
async function takeAttempt(
  deps: CoreDeps,
  counter: AttemptCounter,
  lockedUntil: number | undefined,
  level: SecurityLevel,
  check: Promise<boolean>,
  beside?: () => void,
): Promise<{ slot: number; verdict: Promise<boolean> }> {
  const { config } = deps;
  // Handled now, awaited later: a store error while taking the slot must not leave it unhandled.
  check.catch(() => undefined);
  if (lockedUntil !== undefined) {
    if (lockedUntil > deps.now().getTime()) {
      await check.catch(() => false);
      throw lockedOut(level, config.lockoutMinutes);
    }
    await counter.clearExpiredLock(lockedUntil);
  }
  beside?.();
  let slot = await counter.reserve(config.lockoutThreshold);
  for (let waited = 0; slot === 'locked' && waited < SLOT_WAIT_MS; waited += SLOT_POLL_MS) {
    if (await counter.isLocked()) break;
    await new Promise((resolve) => setTimeout(resolve, SLOT_POLL_MS));
    slot = await counter.reserve(config.lockoutThreshold);
  }
  if (slot === 'locked') {
    await check.catch(() => false);
    throw lockedOut(level, config.lockoutMinutes);
  }
  return { slot, verdict: check };
}

/**
 * The password grant: the login's objects are read (see {@link lookUpLogin}), the password is
 * verified while the attempt's slot is taken, and a completed login's writes (the counter's reset,
 * the refresh token) are sent together.
 */
export async function passwordGrant(deps: CoreDeps, req: TokenRequest): Promise<TokenResponse> {
  const { db, config } = deps;
  const { instanceName, userName } = splitLoginName(req.username, req.instance);
  if (!instanceName) throw tokenError('instance_not_found', 'The instance name is missing: send instance, or username as Instance\\user.');
  const found = await lookUpLogin(deps, instanceName, userName);
  const instance = found.instance;
  if (!instance) throw tokenError('instance_not_found', 'The instance does not exist.');
  await checkInstance(deps, instance, found.above);
  const level = securityLevelOf(instance);

  const user = found.user;
  let auth = found.auth;
  // A user linked to an identity provider signs in through it only (the spec: `invalid_grant`),
  // whatever password it may have had before the link.
  if (!user || !auth?.passwordHash || signsInThroughProvider(user)) {
    // No such user, or one without a password (single sign-on, or never given one).
    if (level === 'Low') {
      await verifyAgainstDummy(req.password);
      throw user ? invalidGrant() : unknownUser(level);
    }
    // Where the answers hide which names exist (Medium, High), the name's attempts are counted and
    // lock it out exactly as a user's wrong passwords would: the same answers, in the same order.
    const name = { instanceKey: instance.key, userName };
    const lockedUntil = found.name ? found.name.lockedUntil : await nameLockedUntil(db, name);
    const counter = nameAttempts(db, name, deps.now().getTime());
    const { slot, verdict } = await takeAttempt(deps, counter, lockedUntil, level, verifyAgainstDummy(req.password));
    await verdict;
    if (slot >= config.lockoutThreshold) await lockName(db, name, deps.now().getTime() + config.lockoutMinutes * 60_000);
    throw user ? invalidGrant() : unknownUser(level);
  }
  const nowMs = deps.now().getTime();
  // The (slow) password check runs while the attempt takes its slot.
  const { slot, verdict } = await takeAttempt(deps, userAttempts(db, user.key), auth.lockedUntil, level, verifyPassword(req.password, auth.passwordHash), () =>
    prefetchSigningKey(deps),
  );
  const failed = async () => {
    if (slot >= config.lockoutThreshold) await lockUser(db, user.key, nowMs + config.lockoutMinutes * 60_000);
  };
  const release = () => releaseLoginAttempt(db, user.key);

  if (!(await verdict)) {
    await failed();
    throw wrongPassword(level);
  }
  if (isDisabled(user)) {
    await release();
    throw disabledUser(level);
  }

  // A required new password is asked for (and checked) before the second factor, and set only
  // once the login completes.
  const change = passwordChangeReason(user, deps.now());
  if (change && req.newPassword === undefined) {
    await release();
    throw change === 'new_password_required'
      ? tokenError('new_password_required', 'The password must be changed at first login: send newpassword.')
      : tokenError('password_expired', 'The password has expired: send newpassword.');
  }
  const minimum = typeof instance.doc.MinimumPasswordLength === 'number' ? instance.doc.MinimumPasswordLength : undefined;
  if (req.newPassword !== undefined) {
    const violation = passwordRuleViolation(req.newPassword, minimum);
    if (violation) {
      await release();
      throw tokenError(violation, describeViolation(violation, minimum));
    }
  }

  if (user.doc.TwoFactorEnabled === true) {
    if (req.oneTimePassword === undefined) {
      await release();
      if (req.sendOneTimePassword) await sendOneTimeCode(deps, instance, user);
      throw tokenError(
        'one_time_password_required',
        req.sendOneTimePassword
          ? 'A one-time code was sent; repeat the login with onetimepassword.'
          : 'This user needs a one-time code: send sendonetimepassword=true to receive one, then onetimepassword.',
      );
    }
    auth = await getAuthState(db, user.key);
    if (!(await acceptOneTimeCode(deps, user.key, auth, req.oneTimePassword))) {
      await failed();
      throw tokenError('incorrect_tfacode', 'The one-time code is incorrect or has expired.');
    }
  }

  // A new password ends the user's other sessions: this login's tokens carry the new generation.
  const signedIn = req.newPassword !== undefined ? await setNewPassword(deps, user, req.newPassword) : user;
  loginHints.set(hintId(deps, instanceName, userName), { instanceKey: instance.key, above: ancestorKeys(instance), userKey: user.key });

  // The counter's reset and the tokens' write go together: the login's last round trip.
  const [tokens] = await Promise.all([
    issueTokens(deps, {
      subject: subjectOf(user, instance, signedIn.sessionGeneration ?? 0),
      clientId: req.clientId,
      family: undefined,
    }),
    recordLoginSuccess(db, user.key, nowMs),
  ]);
  return tokens;
}

async function sendOneTimeCode(deps: CoreDeps, instance: StoredObject, user: StoredObject): Promise<void> {
  const code = String(randomInt(0, 10 ** OTP_DIGITS)).padStart(OTP_DIGITS, '0');
  const salt = randomBytes(16).toString('hex');
  const now = deps.now();
  await storeOneTimeCode(deps.db, user.key, { hash: otpHash(salt, code), salt, expiresAt: now.getTime() + OTP_VALID_MS });
  await deps.notifier.send({
    kind: 'one-time-password',
    instance: nameOf(instance),
    user: nameOf(user),
    code,
    at: now.toISOString(),
    ...(typeof user.doc.Email === 'string' && user.doc.Email ? { email: user.doc.Email } : {}),
  });
  deps.logger.info('one-time code sent', { userKey: user.key });
}

/** True when `code` is the pending, unexpired code (which is then used up). */
async function acceptOneTimeCode(deps: CoreDeps, userKey: string, auth: AuthState | undefined, code: string): Promise<boolean> {
  const otp = auth?.otp;
  if (!otp) return false;
  if (otp.expiresAt <= deps.now().getTime()) {
    await consumeOneTimeCode(deps.db, userKey, otp.hash);
    return false;
  }
  const candidate = /^\d{6}$/.test(code) ? otpHash(otp.salt, code) : '00';
  if (hexEqual(candidate, otp.hash)) return consumeOneTimeCode(deps.db, userKey, otp.hash);
  await recordOneTimeCodeFailure(deps.db, userKey, otp.hash, OTP_MAX_TRIES);
  return false;
}

/** Sets the new password of a completed login and clears the user's change flags; returns the user as stored. */
async function setNewPassword(deps: CoreDeps, user: StoredObject, password: string): Promise<StoredObject> {
  const hash = await hashPassword(password);
  let current = user;
  for (let attempt = 0; ; attempt++) {
    const doc: Record<string, unknown> = { ...current.doc, MustChangePassword: false };
    const exp = doc.PasswordExpiresOn;
    if (typeof exp === 'string' && Date.parse(exp) <= deps.now().getTime()) delete doc.PasswordExpiresOn;
    try {
      return await changePasswordAtLogin(deps.db, current, doc, hash, deps.now().getTime());
    } catch (err) {
      // An administrator saved the user in between: apply the change to their version once more.
      if (!(err instanceof ConditionFailed) || attempt >= 2) throw err;
      const fresh = await getObject(deps.db, user.key, true);
      if (!isUser(fresh)) throw err;
      current = fresh;
    }
  }
}

/** Whom a login's tokens are for: the user and the instance they signed in to, with the user's role and session generation. */
function subjectOf(user: StoredObject, instance: StoredObject, sessionGeneration: number): TokenSubject {
  return { userKey: user.key, userName: nameOf(user), instanceKey: instance.key, instanceName: nameOf(instance), role: roleOf(user), sessionGeneration };
}

interface IssueSpec {
  readonly subject: TokenSubject;
  readonly clientId: string;
  /** The refresh token being exchanged, or undefined for a new login. */
  readonly family: { readonly old: RefreshRecord } | undefined;
}

/**
 * Issues the tokens of a completed login or refresh: one write (a new login's refresh family, or
 * the rotation), with the access token signed meanwhile.
 */
async function issueTokens(deps: CoreDeps, spec: IssueSpec): Promise<TokenResponse> {
  const now = deps.now();
  const nowMs = now.getTime();
  const refreshToken = newRefreshToken();
  const next: RefreshRecord = {
    hash: refreshTokenHash(refreshToken),
    family: spec.family?.old.family ?? newFamilyId(),
    userKey: spec.subject.userKey,
    instanceKey: spec.subject.instanceKey,
    clientId: spec.clientId,
    issuedAt: nowMs,
    // The family's absolute expiry, counted from the password login.
    expiresAt: spec.family?.old.expiresAt ?? nowMs + deps.config.refreshTokenDays * 86_400_000,
  };
  const write = spec.family
    ? rotateRefreshToken(deps.db, spec.family.old, next, nowMs)
    : createRefreshFamily(deps.db, next, spec.subject.sessionGeneration ?? 0).then(() => true);
  const signed = issueAccessToken(deps.keys, deps.config, spec.subject, now);
  // A failed write answers before the signature is waited for: keep that one from going unhandled.
  signed.catch(() => undefined);
  if (!(await write)) throw tokenError('RefreshTokenTicketNotValid', 'The refresh token is not valid.');
  const access = await signed;
  return {
    userName: `${spec.subject.instanceName}\\${spec.subject.userName}`,
    access_token: access.token,
    'as:client_id': spec.clientId,
    token_type: 'bearer',
    refresh_token: refreshToken,
    expires_in: access.expiresIn,
    '.issued': access.issuedAt.toUTCString(),
    '.expires': access.expiresAt.toUTCString(),
    instance: spec.subject.instanceKey,
  };
}

/**
 * The tokens of a completed single sign-on (the authorization_code grant, once its code is
 * redeemed): the same answer as a password login's, refresh token included, after the checks a
 * refresh makes (the user still belongs to the instance and is enabled; the instance and those
 * above it are enabled and licensed).
 */
export async function signInTokens(deps: CoreDeps, grant: { readonly userKey: string; readonly instanceKey: string; readonly clientId: string }): Promise<TokenResponse> {
  const { db } = deps;
  prefetchSigningKey(deps);
  const [user, instance] = await Promise.all([getObject(db, grant.userKey, true), getObject(db, grant.instanceKey, true)]);
  if (!isUser(user) || !isInstance(instance) || ownInstance(user) !== instance.key) throw tokenError('invalid_grant', 'The authorization code is not valid.');
  if (isDisabled(user)) throw disabledUser(securityLevelOf(instance));
  await checkInstance(deps, instance, await ancestorsOf(db, instance));
  // No failed-login counter to reset: a user signing in through a provider has no password login.
  return issueTokens(deps, {
    subject: subjectOf(user, instance, user.sessionGeneration ?? 0),
    clientId: grant.clientId,
    family: undefined,
  });
}

const ticketNotValid = () => tokenError('RefreshTokenTicketNotValid', 'The refresh token is not valid or has expired; log in again.');

/** The refresh grant: one use per token; a second use revokes the whole login's tokens. */
export async function refreshGrant(deps: CoreDeps, req: TokenRequest): Promise<TokenResponse> {
  const { db } = deps;
  if (!req.refreshToken) throw ticketNotValid();
  const old = await getRefreshToken(db, refreshTokenHash(req.refreshToken));
  const nowMs = deps.now().getTime();
  if (!old || old.expiresAt <= nowMs || old.clientId !== req.clientId) throw ticketNotValid();
  prefetchSigningKey(deps);
  // The family, the user and the instance: one request.
  const read = await readRefreshItems(db, old);
  const family = read.family;
  if (!family || family.revokedAt !== undefined) throw ticketNotValid();
  if (old.usedAt !== undefined) {
    // RFC 9700 reuse detection: a used token came back, so one copy is in the wrong hands.
    await revokeRefreshFamily(db, old.family, nowMs);
    deps.logger.warn('refresh token reuse: login revoked', { userKey: old.userKey });
    throw ticketNotValid();
  }
  const user = read.object(old.userKey);
  const instance = read.object(old.instanceKey);
  if (!isUser(user) || !isInstance(instance) || ownInstance(user) !== instance.key || isDisabled(user)) throw ticketNotValid();
  // The user's sessions were revoked after this login (new password, disabled, sign out everywhere).
  if (family.sessionGeneration < (user.sessionGeneration ?? 0)) throw ticketNotValid();
  await checkInstance(deps, instance, await ancestorsOf(db, instance));
  return issueTokens(deps, {
    subject: subjectOf(user, instance, family.sessionGeneration),
    clientId: req.clientId,
    family: { old },
  });
}

/**
 * Token revocation (RFC 7009) of a refresh token: the whole login it belongs to stops (every
 * refresh token of its family), when the token was issued to this client. An unknown, expired or
 * another client's token changes nothing and is not told apart (the answer is the same).
 */
export async function revokeRefreshToken(deps: CoreDeps, token: string, clientId: string): Promise<void> {
  const record = await getRefreshToken(deps.db, refreshTokenHash(token));
  if (!record || record.clientId !== clientId) return;
  await revokeRefreshFamily(deps.db, record.family, deps.now().getTime());
}
