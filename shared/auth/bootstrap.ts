/**
 * First start of a deployment: the root instance (with a licence from the local development
 * licence authority, kept in the data directory) and its administrator. Idempotent: a later start
 * finds the instance by its name claim (and the administrator by theirs) and creates nothing.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError } from '../errors.ts';
import type { CoreDeps } from '../core-deps.ts';
import { findInstanceByName, findUserByName } from './directory.ts';
import { createInstance, createUser } from './provisioning.ts';
import { localLicenseAuthority } from './license-authority.ts';
import { generatePassword } from './passwords.ts';
import { newKey } from '../model/placement.ts';

export interface SeedOptions {
  readonly instanceName: string;
  readonly adminUser: string;
  /** GATEHOUSE_ADMIN_PASSWORD; a strong password is generated when omitted. */
  readonly adminPassword?: string;
  /** The consoleApp client secret (printed by the local runtime beside the login; not stored). */
  readonly clientSecret: string;
  readonly dataDir: string;
}

export interface SeedResult {
  readonly instanceKey: string;
  /** Set when this call created the administrator (the given or the generated password). */
  readonly adminPassword?: string;
  readonly passwordWasGenerated: boolean;
  /** True when this call created the root instance or its administrator. */
  readonly created: boolean;
}

/** The file that holds a generated administrator password (mode 0600). */
const adminPasswordFile = (dataDir: string): string => join(dataDir, 'admin-password');

const isDuplicate = (err: unknown) => err instanceof ApiError && err.status === 409;

export async function seedDeployment(deps: CoreDeps, opts: SeedOptions): Promise<SeedResult> {
  const { db } = deps;
  let created = false;
  let instance = await findInstanceByName(db, opts.instanceName);
  if (!instance) {
    try {
      const key = newKey();
      const license = await localLicenseAuthority(opts.dataDir).issue({ instanceKey: key, now: deps.now() });
      instance = await createInstance(db, { key, name: opts.instanceName, license });
      created = true;
    } catch (err) {
      // Another process seeded it at the same moment.
      if (!isDuplicate(err)) throw err;
      instance = await findInstanceByName(db, opts.instanceName);
      if (!instance) throw err;
    }
  }

  if (await findUserByName(db, instance.key, opts.adminUser)) {
    return { instanceKey: instance.key, passwordWasGenerated: false, created };
  }
  const generated = opts.adminPassword === undefined || opts.adminPassword === '';
  const password = generated ? generatePassword() : opts.adminPassword!;
  try {
    await createUser(db, { instance, name: opts.adminUser, password, role: 'Administrator' });
  } catch (err) {
    if (isDuplicate(err)) return { instanceKey: instance.key, passwordWasGenerated: false, created };
    throw err;
  }
  if (generated) {
    await mkdir(opts.dataDir, { recursive: true, mode: 0o700 });
    await writeFile(adminPasswordFile(opts.dataDir), `${password}\n`, { mode: 0o600 });
  }
  return { instanceKey: instance.key, adminPassword: password, passwordWasGenerated: generated, created: true };
}
