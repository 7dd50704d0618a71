/** What an authentication that should fail failed with, for assertions on the OAuth error. */
import { OAuthError } from '#shared/errors.ts';

/** The status, code and description of the OAuthError `p` rejects with; throws if it resolves or fails otherwise. */
export async function rejection(p: Promise<unknown>): Promise<{ status: number; code: string; description: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof OAuthError) return { status: err.status, code: err.code, description: err.message };
    throw err;
  }
  throw new Error('expected a rejection');
}
