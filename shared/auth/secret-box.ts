/**
 * Secrets at rest: a value the service must read back (a webhook's signing secret, an identity
 * provider's client secret) is stored sealed with AES-256-GCM (node:crypto), as `enc1:` +
 * base64url of the 12-byte IV, the ciphertext and the 16-byte tag. The additional data binds a
 * sealed value to what it belongs to (a webhook's instance and key, a provider's key), so one
 * cannot be moved onto another item. A value without the prefix is one
 * stored before sealing existed: it reads as it is (the repository seals it on its next write).
 *
 * The key is derived (HKDF-SHA256) from a key secret of the deployment, read once per execution
 * environment: in AWS the Secrets Manager secret `GATEHOUSE_WEBHOOK_SECRET_KEY_SECRET` (generated
 * by the stack, readable only by the functions that read or write webhooks or identity providers); locally
 * `<dataDir>/keys/webhook-secret.key` (mode 0600, 32 random bytes made on first use, like the
 * signing key ring's file). Losing the key loses the secrets: receivers then need a rotation.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { config, type Config } from '../config.ts';

const PREFIX = 'enc1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HKDF_INFO = 'gatehouse webhook secrets v1';

/** The local key secret's file name, in `<dataDir>/keys`. */
const WEBHOOK_KEY_FILE = 'webhook-secret.key';

/** True when `stored` is a sealed value (not one stored in clear before sealing existed). */
export const isSealed = (stored: string): boolean => stored.startsWith(PREFIX);

type KeyConfig = Pick<Config, 'region' | 'dataDir' | 'webhookSecretKeySecret'>;

/** The key secret's text: the Secrets Manager secret, or the data directory's file (made on first use). */
async function readKeySecret(cfg: KeyConfig): Promise<string> {
  const secretId = cfg.webhookSecretKeySecret;
  if (secretId) {
    const { secretReader } = await import('./secret-read.ts');
    const text = await secretReader(cfg.region, secretId)();
    if (!text) throw new Error('the webhook secret key secret is empty');
    return text;
  }
  const dir = join(cfg.dataDir, 'keys');
  const file = join(dir, WEBHOOK_KEY_FILE);
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const fresh = randomBytes(32).toString('base64');
  try {
    // `wx`: two processes starting at once agree on the first one's key.
    await writeFile(file, `${fresh}\n`, { flag: 'wx', mode: 0o600 });
    return fresh;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return (await readFile(file, 'utf8')).trim();
  }
}

/** The AES key per key source, read once per execution environment. */
const keys = new Map<string, Promise<Buffer>>();

function keyOf(cfg: KeyConfig): Promise<Buffer> {
  const id = cfg.webhookSecretKeySecret ? `sm:${cfg.region}:${cfg.webhookSecretKeySecret}` : `file:${cfg.dataDir}`;
  let key = keys.get(id);
  if (!key) {
    key = readKeySecret(cfg).then((text) => Buffer.from(hkdfSync('sha256', Buffer.from(text, 'utf8'), Buffer.alloc(0), HKDF_INFO, 32)));
    // A failed read is tried again by the next call, not remembered.
    key.catch(() => keys.delete(id));
    keys.set(id, key);
  }
  return key;
}

/** Seals `plain` for the item `context` names (e.g. `<instance>/<webhook>`). */
export async function sealSecret(plain: string, context: string, cfg: KeyConfig = config()): Promise<string> {
  return (await secretSealer(cfg))(plain, context);
}

/** The clear value of `stored` (as it is when stored in clear); throws when it was tampered with or sealed for another item. */
export async function openSecret(stored: string, context: string, cfg: KeyConfig = config()): Promise<string> {
  if (!isSealed(stored)) return stored;
  const raw = Buffer.from(stored.slice(PREFIX.length), 'base64url');
  if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('a sealed secret is truncated');
  const decipher = createDecipheriv('aes-256-gcm', await keyOf(cfg), raw.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
}

/**
 * A sealer whose key is already read: for writers that learn the item's key only when they build
 * their transaction synchronously (an identity provider's key is made after its secret is prepared).
 */
export async function secretSealer(cfg: KeyConfig = config()): Promise<(plain: string, context: string) => string> {
  const key = await keyOf(cfg);
  return (plain, context) => {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${PREFIX}${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
  };
}
