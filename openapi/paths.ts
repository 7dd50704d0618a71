/** Where the document is written, and the version it carries. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const DOCUMENT_PATH = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));

/** The typed client's generated types (see `client-types.ts`). */
export const CLIENT_TYPES_PATH = fileURLToPath(new URL('../clients/typescript/src/schema.ts', import.meta.url));

export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8')) as { version: string };
  return pkg.version;
}
