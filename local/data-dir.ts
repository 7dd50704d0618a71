/**
 * The local runtime's data directory is private to the user running it: it holds the database
 * (webhook secrets, password hashes), the signing keys, the DynamoDB endpoint and the one-time
 * code outbox. The directory and every directory in it are 0700, every file 0600. New ones are
 * created so (explicit modes, and a 0077 umask for DynamoDB Local's Java process, which makes its
 * own files); a directory made by an earlier version is tightened at start.
 */
import { chmod, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';

const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Creates `dir` (0700) if needed, and makes it and everything in it private to its owner. */
export async function securePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  await tighten(dir);
}

async function tighten(dir: string): Promise<void> {
  await chmod(dir, PRIVATE_DIR_MODE);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    // Symbolic links are left alone: chmod would change what they point at, which may be elsewhere.
    if (entry.isDirectory()) await tighten(path);
    else if (entry.isFile()) await chmod(path, PRIVATE_FILE_MODE);
  }
}

/**
 * Runs `spawn` (which starts a child process) with the umask 0077, so the files and directories
 * the child creates are its user's only; the umask is restored at once (the child keeps its own).
 */
export function spawnPrivately<T>(spawn: () => T): T {
  const previous = process.umask(0o077);
  try {
    return spawn();
  } finally {
    process.umask(previous);
  }
}
