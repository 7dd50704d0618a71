/**
 * `npm run admin -- <command> [options]`: administration of a local deployment.
 *
 *   npm run admin -- create-instance --name Acme [--parent Gatehouse] [--security-level Low|Medium|High]
 *                                    [--min-password-length 12] [--license] [--trial] [--days 30]
 *   npm run admin -- create-user --instance Acme --name alice [--password 'S3cret!pass'] [--role Administrator|Operator|ReadOnly]
 *                                [--two-factor] [--email alice@example.com] [--must-change-password]
 *                                [--password-expires-on 2030-01-01T00:00:00Z] [--disabled]
 *   npm run admin -- issue-license --instance Acme [--days 365] [--trial] [--print]
 *   npm run admin -- rotate-signing-key
 *
 * - `create-instance` without `--parent` makes another root instance; `--license` also issues it a
 *   licence (otherwise it uses its nearest licensed ancestor's, and a root instance has none).
 * - `create-user` checks the password against the instance's rules; without `--password` a strong
 *   one is generated and printed once.
 * - `issue-license` signs a licence with the local development licence authority
 *   (`<data dir>/keys/license-authority.json`) and stores it on the instance; `--print` only prints
 *   it. Without `--days` a licence does not expire (a trial lasts 30 days).
 * - `rotate-signing-key` publishes a new access-token signing key in `<data dir>/keys/signing-key.json`:
 *   it is in the JWKS at once and signs from twice `GATEHOUSE_KEY_CACHE_SECONDS` later (every cache
 *   has read it by then); the key it replaces stays published until its last token has expired
 *   (`GATEHOUSE_ACCESS_TOKEN_TTL` + one cache lifetime after the switch), then the runtime's
 *   minutely maintenance drops it. Refused (exit 1) while a key is already waiting to sign. Use
 *   the same settings as the runtime. Needs no database.
 *
 * Which database: the same table as the local runtime (`GATEHOUSE_TABLE_NAME`, default `gatehouse`).
 * The endpoint is `GATEHOUSE_DYNAMODB_ENDPOINT` when set (the runtime prints it in its
 * `GATEHOUSE_READY` line as `dynamodbEndpoint`); else the one a running runtime wrote to
 * `<data dir>/dynamodb-endpoint`; else, when no runtime is running, the command starts DynamoDB
 * Local on `<data dir>/dynamodb` itself for the time of the command. The data directory is
 * `GATEHOUSE_DATA_DIR` (default `.data`). Output is one JSON object on stdout; errors go to
 * stderr with exit code 1 (2 for usage errors).
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig, reloadConfig } from '#shared/config.ts';
import { ApiError } from '#shared/errors.ts';
import { createDb, type Db } from '#shared/db/client.ts';
import { ensureTable } from './storage/create-tables.ts';
import { SECURITY_LEVELS, ROLES, findInstanceByName, type SecurityLevel } from '#shared/auth/directory.ts';
import { createInstance, createUser, setInstanceLicense } from '#shared/auth/provisioning.ts';
import { signingKeyAt } from '#shared/auth/key-ring.ts';
import { rotationPolicyOf } from '#shared/auth/keys.ts';
import { maintainFileRing } from '#shared/auth/key-files.ts';
import { localLicenseAuthority } from '#shared/auth/license-authority.ts';
import { describeViolation, generatePassword, passwordRuleViolation } from '#shared/auth/passwords.ts';
import type { Role } from '#shared/auth/principal.ts';
import { newKey } from '#shared/model/placement.ts';
import { startDynamo, waitForEndpoint, type RunningDynamo } from './dynamo.ts';

class UsageError extends Error {}

const USAGE = `usage:
  npm run admin -- create-instance --name <name> [--parent <instance name>] [--security-level Low|Medium|High] [--min-password-length N] [--license] [--trial] [--days N]
  npm run admin -- create-user --instance <instance name> --name <user> [--password <p>] [--role Administrator|Operator|ReadOnly] [--two-factor] [--email <e>] [--must-change-password] [--password-expires-on <ISO>] [--disabled]
  npm run admin -- issue-license --instance <instance name> [--days N] [--trial] [--print]
  npm run admin -- rotate-signing-key`;

const OPTIONS = {
  name: { type: 'string' },
  parent: { type: 'string' },
  instance: { type: 'string' },
  password: { type: 'string' },
  role: { type: 'string' },
  email: { type: 'string' },
  days: { type: 'string' },
  trial: { type: 'boolean' },
  print: { type: 'boolean' },
  license: { type: 'boolean' },
  'security-level': { type: 'string' },
  'min-password-length': { type: 'string' },
  'two-factor': { type: 'boolean' },
  'must-change-password': { type: 'boolean' },
  'password-expires-on': { type: 'string' },
  disabled: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function required(v: Values, name: keyof Values): string {
  const value = v[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${String(name)} is required`);
  return value;
}

function positiveInt(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive whole number`);
  return n;
}

async function instanceNamed(db: Db, name: string) {
  const found = await findInstanceByName(db, name);
  if (!found) throw new Error(`There is no instance named "${name}".`);
  return found;
}

async function createInstanceCommand(db: Db, dataDir: string, v: Values) {
  const name = required(v, 'name');
  const level = v['security-level'];
  if (level !== undefined && !SECURITY_LEVELS.includes(level as SecurityLevel)) throw new UsageError('--security-level must be Low, Medium or High');
  const parent = v.parent ? await instanceNamed(db, v.parent) : undefined;
  const minimumPasswordLength = positiveInt(v['min-password-length'], 'min-password-length');
  const key = newKey();
  const license =
    v.license || v.trial
      ? await localLicenseAuthority(dataDir).issue({ instanceKey: key, days: positiveInt(v.days, 'days'), trial: v.trial === true })
      : undefined;
  const created = await createInstance(db, {
    key,
    name,
    ...(parent ? { parent } : {}),
    ...(level ? { securityLevel: level as SecurityLevel } : {}),
    ...(minimumPasswordLength !== undefined ? { minimumPasswordLength } : {}),
    ...(license ? { license } : {}),
  });
  return { created: 'instance', key: created.key, name, parent: parent?.key ?? null, licensed: license !== undefined };
}

async function createUserCommand(db: Db, v: Values) {
  const instance = await instanceNamed(db, required(v, 'instance'));
  const name = required(v, 'name');
  const role = (v.role ?? 'Operator') as Role;
  if (!ROLES.includes(role)) throw new UsageError('--role must be Administrator, Operator or ReadOnly');
  const expires = v['password-expires-on'];
  if (expires !== undefined && Number.isNaN(Date.parse(expires))) throw new UsageError('--password-expires-on must be an ISO date-time');
  const generated = v.password === undefined;
  const password = v.password ?? generatePassword();
  const minimum = typeof instance.doc.MinimumPasswordLength === 'number' ? instance.doc.MinimumPasswordLength : undefined;
  const violation = passwordRuleViolation(password, minimum);
  if (violation) throw new UsageError(`${violation}: ${describeViolation(violation, minimum)}`);
  const user = await createUser(db, {
    instance,
    name,
    password,
    role,
    twoFactorEnabled: v['two-factor'] === true,
    mustChangePassword: v['must-change-password'] === true,
    isDisabled: v.disabled === true,
    ...(v.email !== undefined ? { email: v.email } : {}),
    ...(expires !== undefined ? { passwordExpiresOn: new Date(expires).toISOString() } : {}),
  });
  // A generated password is shown once, here; a given one is never echoed.
  return { created: 'user', key: user.key, instance: instance.key, name, role, ...(generated ? { password } : {}) };
}

/** Publishes the next signing key (see the header); no database needed. */
async function rotateSigningKeyCommand(dataDir: string) {
  const cfg = loadConfig();
  const now = new Date();
  const m = await maintainFileRing(dataDir, rotationPolicyOf(cfg), { rotate: true, now });
  const nowS = Math.floor(now.getTime() / 1000);
  const iso = (s: number | undefined) => (s === undefined ? null : new Date(s * 1000).toISOString());
  const signing = signingKeyAt(m.ring, nowS);
  const next = m.ring.keys.find((k) => k.signsFrom > nowS);
  if (!m.scheduled) throw new Error(`A signing key is already waiting to sign (kid ${next?.jwk.kid}, from ${iso(next?.signsFrom)}); rotate again after that.`);
  return {
    rotated: true,
    next: { kid: m.scheduled, signsFrom: iso(next?.signsFrom) },
    signing: { kid: signing.jwk.kid, dropAfter: iso(m.ring.keys.find((k) => k === signing)?.dropAfter) },
    published: m.ring.keys.map((k) => k.jwk.kid),
    dropped: m.dropped,
  };
}

async function issueLicenseCommand(db: Db, dataDir: string, v: Values) {
  const instance = await instanceNamed(db, required(v, 'instance'));
  const days = positiveInt(v.days, 'days');
  const license = await localLicenseAuthority(dataDir).issue({ instanceKey: instance.key, ...(days !== undefined ? { days } : {}), trial: v.trial === true });
  if (v.print) return { instance: instance.key, license };
  await setInstanceLicense(db, instance.key, license);
  return { licensed: instance.key, name: instance.doc.CommonName, trial: v.trial === true, days: days ?? (v.trial ? 30 : null) };
}

/** The DynamoDB endpoint to use, starting DynamoDB Local when nothing is running. */
async function connect(dataDir: string, endpoint: string | undefined): Promise<RunningDynamo> {
  if (endpoint) return startDynamo({ dataDir, endpoint });
  try {
    const written = (await readFile(join(dataDir, 'dynamodb-endpoint'), 'utf8')).trim();
    if (written) {
      await waitForEndpoint(written, 1500);
      return startDynamo({ dataDir, endpoint: written });
    }
  } catch {
    // No runtime is running (or it wrote nothing): start our own.
  }
  return startDynamo({ dataDir });
}

export async function runAdmin(argv: readonly string[]): Promise<Record<string, unknown>> {
  const { values, positionals } = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  const command = positionals[0];
  if (values.help || !command) throw new UsageError('');
  if (!['create-instance', 'create-user', 'issue-license', 'rotate-signing-key'].includes(command)) throw new UsageError(`unknown command "${command}"`);
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const base = loadConfig();
  const dataDir = resolve(base.dataDir);
  if (command === 'rotate-signing-key') return rotateSigningKeyCommand(dataDir);
  const dynamo = await connect(dataDir, base.dynamodbEndpoint);
  try {
    process.env.GATEHOUSE_DATA_DIR = dataDir;
    process.env.GATEHOUSE_DYNAMODB_ENDPOINT = dynamo.endpoint;
    const cfg = reloadConfig();
    const db = createDb(cfg);
    try {
      await ensureTable(db);
      if (command === 'create-instance') return await createInstanceCommand(db, dataDir, values);
      if (command === 'create-user') return await createUserCommand(db, values);
      return await issueLicenseCommand(db, dataDir, values);
    } finally {
      db.raw.destroy();
    }
  } finally {
    await dynamo.stop();
  }
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname);

if (isMain) {
  runAdmin(process.argv.slice(2)).then(
    (out) => {
      process.stdout.write(`${JSON.stringify(out)}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
        if ((err as Error).message) process.stderr.write(`${(err as Error).message}\n`);
        process.stderr.write(`${USAGE}\n`);
        process.exit(2);
      }
      const message = err instanceof ApiError ? `${err.code}: ${err.message}` : (err as Error).message;
      process.stderr.write(`admin: ${message}\n`);
      process.exit(1);
    },
  );
}
