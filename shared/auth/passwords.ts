/**
 * Password hashing and password rules.
 *
 * Hashes are scrypt (node:crypto) with the OWASP parameters N=2^17, r=8, p=1, a 16-byte random
 * salt and a 32-byte key, encoded in the self-describing PHC string format
 * `$scrypt$ln=17,r=8,p=1$<salt b64>$<hash b64>` so the parameters can be raised later without
 * breaking stored hashes. One hash is deliberately CPU-bound (`npm run bench`, token entry): give
 * the token function ≥ 1024 MB, which buys a larger share of a CPU.
 * Test runs lower N for the hashes they make (`GATEHOUSE_PASSWORD_HASH_COST`, see shared/config.ts):
 * a stored hash is always verified with the parameters it names.
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { config } from '../config.ts';

const R = 8;
const P = 1;
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

/** scrypt needs 128·N·r·p bytes (128 MiB here); Node's default limit is 32 MiB. */
const maxmemFor = (n: number, r: number, p: number): number => 128 * n * r * p + 16 * 1024 * 1024;

/** Stored hashes are ours, but a corrupt one must not make us allocate gigabytes. */
const MAX_LOG_N = 20;

function scrypt(password: string, salt: Buffer, keyLength: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCb(password.normalize('NFC'), salt, keyLength, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** Hashes a password with a fresh random salt. */
export async function hashPassword(password: string, logN = config().passwordHashCost): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const n = 2 ** logN;
  const key = await scrypt(password, salt, KEY_LENGTH, { N: n, r: R, p: P, maxmem: maxmemFor(n, R, P) });
  return `$scrypt$ln=${logN},r=${R},p=${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

interface ParsedHash {
  readonly logN: number;
  readonly r: number;
  readonly p: number;
  readonly salt: Buffer;
  readonly key: Buffer;
}

const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

/** Parses an encoded hash; undefined when it is not one of ours. */
export function parseHash(encoded: string): ParsedHash | undefined {
  const m = PHC.exec(encoded);
  if (!m) return undefined;
  const [logN, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (logN < 10 || logN > MAX_LOG_N || r < 1 || p < 1) return undefined;
  const salt = Buffer.from(m[4]!, 'base64');
  const key = Buffer.from(m[5]!, 'base64');
  if (salt.length < 8 || key.length < 16) return undefined;
  return { logN, r, p, salt, key };
}

/**
 * True when `password` matches `encoded`. The comparison is constant-time; a malformed hash is a
 * mismatch (after the same work, so it cannot be told apart by timing).
 */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const parsed = parseHash(encoded);
  const h = parsed ?? dummy();
  const n = 2 ** h.logN;
  const key = await scrypt(password, h.salt, h.key.length, { N: n, r: h.r, p: h.p, maxmem: maxmemFor(n, h.r, h.p) });
  return timingSafeEqual(key, h.key) && parsed !== undefined;
}

let dummyHash: ParsedHash | undefined;

/**
 * A hash no password matches, with the current parameters: a random salt and a random key. The
 * work of checking a password against it is the work of checking one against a real hash (scrypt
 * with the same N, r, p and key length), and making it costs no scrypt: an execution environment's
 * first unknown-user login costs what later ones do, without hashing in the background at every
 * cold start of the token function (128 MiB and a core's worth of scrypt beside its first request).
 */
function dummy(): ParsedHash {
  dummyHash ??= { logN: config().passwordHashCost, r: R, p: P, salt: randomBytes(SALT_LENGTH), key: randomBytes(KEY_LENGTH) };
  return dummyHash;
}

/**
 * Spends the same time as {@link verifyPassword} on a real hash and returns false: used when the
 * user does not exist (or has no password), so timing does not reveal which user names exist.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  const h = dummy();
  const n = 2 ** h.logN;
  const key = await scrypt(password, h.salt, h.key.length, { N: n, r: h.r, p: h.p, maxmem: maxmemFor(n, h.r, h.p) });
  timingSafeEqual(key, h.key);
  return false;
}

const DEFAULT_MINIMUM_PASSWORD_LENGTH = 8;

export type PasswordRuleViolation = 'password_doesnot_meet_minimum_length_rule' | 'password_doesnot_meet_complexity_rule';

/**
 * The rule a new password breaks, or undefined: at least `minimumLength` characters (the
 * instance's `MinimumPasswordLength`, 8 when unset) and a mix of upper case, lower case, digits
 * and special characters (anything that is neither a letter nor a digit). Length counts
 * characters (code points), not UTF-16 units.
 */
export function passwordRuleViolation(password: string, minimumLength?: number): PasswordRuleViolation | undefined {
  const min =
    typeof minimumLength === 'number' && Number.isInteger(minimumLength) && minimumLength > 0
      ? minimumLength
      : DEFAULT_MINIMUM_PASSWORD_LENGTH;
  if ([...password].length < min) return 'password_doesnot_meet_minimum_length_rule';
  const upper = /\p{Lu}/u.test(password);
  const lower = /\p{Ll}/u.test(password);
  const digit = /\p{Nd}/u.test(password);
  const special = /[^\p{L}\p{N}]/u.test(password);
  if (!(upper && lower && digit && special)) return 'password_doesnot_meet_complexity_rule';
  return undefined;
}

/** Human text of a rule violation (token error descriptions, ValidationFailed messages). */
export function describeViolation(v: PasswordRuleViolation, minimumLength?: number): string {
  const min = typeof minimumLength === 'number' && minimumLength > 0 ? minimumLength : DEFAULT_MINIMUM_PASSWORD_LENGTH;
  return v === 'password_doesnot_meet_minimum_length_rule'
    ? `The new password must be at least ${min} characters long.`
    : 'The new password must mix upper case and lower case letters, digits and special characters.';
}

/** A strong random password that meets the rules (generated admin passwords). */
export function generatePassword(length = 20): string {
  const sets = ['ABCDEFGHJKLMNPQRSTUVWXYZ', 'abcdefghijkmnopqrstuvwxyz', '23456789', '!#%+-=?@_'];
  const all = sets.join('');
  const pick = (s: string) => s[randomBytes(4).readUInt32BE(0) % s.length]!;
  for (;;) {
    const chars = Array.from({ length }, () => pick(all));
    const out = chars.join('');
    if (!passwordRuleViolation(out)) return out;
  }
}
