/**
 * SCIM PATCH (RFC 7644 §3.5.2), applied by `scim-patch` to the resource as the service renders it,
 * after the forms provisioning clients send that the RFC does not name are brought to its own:
 *
 * - Entra ID capitalises `op` (`Replace`) and has sent booleans as strings (`"active": "False"`);
 * - a `replace`/`add` without a path carries an object whose keys may be attribute paths
 *   (`{"name.givenName": "Ada", "active": false}`): each key becomes an operation of its own;
 * - a path may carry the core schema's URN (`urn:ietf:params:scim:schemas:core:2.0:User:userName`);
 *   extension attributes (enterprise `employeeNumber`, ...) are not mapped and are dropped.
 *
 * Pure: the operations below (`users.ts`, `groups.ts`) turn the patched resource into the
 * object's new document.
 */
import { scimPatch, type ScimPatchOperation, type ScimResource } from 'scim-patch';
import { isPlainObject } from '../objects/validate.ts';
import { invalidSyntax, invalidValue, ScimError, type ScimType } from './scim-errors.ts';
import { PATCH_SCHEMA } from './discovery.ts';

export interface PatchOp {
  readonly op: 'add' | 'replace' | 'remove';
  readonly path?: string;
  readonly value?: unknown;
}

/** Attributes a client never changes (`id`, `meta`) or that only name the schemas. */
const IGNORED = new Set(['schemas', 'id', 'meta']);

/** At most this many operations a PATCH: each may connect a member (a transaction each). */
export const MAX_PATCH_OPERATIONS = 1000;

/** `"True"`/`"False"` (any case) → the boolean; anything else unchanged. */
export function booleanish(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const t = v.trim().toLowerCase();
  return t === 'true' ? true : t === 'false' ? false : v;
}

/** The path without the core schema's URN prefix; undefined for an extension's attribute (not mapped). */
function corePath(path: string, coreSchema: string): string | undefined {
  const p = path.trim();
  if (p.toLowerCase().startsWith(`${coreSchema.toLowerCase()}:`)) return p.slice(coreSchema.length + 1);
  return p.toLowerCase().startsWith('urn:') ? undefined : p;
}

/** The attribute a path names first (`emails[type eq "work"].value` → `emails`), lower case. */
export const headAttribute = (path: string): string => path.split(/[.[]/, 1)[0]!.trim().toLowerCase();

const withValue = (op: PatchOp['op'], path: string | undefined, value: unknown): PatchOp =>
  ({ op, ...(path !== undefined ? { path } : {}), ...(value !== undefined ? { value: headAttribute(path ?? '') === 'active' ? booleanish(value) : value } : {}) });

/**
 * The operations of a PATCH body, in the RFC's form (see the module comment). A body that is not a
 * PatchOp message is a 400 invalidSyntax; an operation that is not add, replace or remove, or a
 * remove without a path, 400 invalidValue / noTarget.
 */
export function patchOperations(body: unknown, coreSchema: string): PatchOp[] {
  if (!isPlainObject(body) || !Array.isArray(body.Operations)) throw invalidSyntax('A PATCH body is a PatchOp message with an Operations array.');
  if (Array.isArray(body.schemas) && !body.schemas.includes(PATCH_SCHEMA)) throw invalidSyntax(`A PATCH body names the schema ${PATCH_SCHEMA}.`);
  if (body.Operations.length > MAX_PATCH_OPERATIONS) throw invalidValue(`At most ${MAX_PATCH_OPERATIONS} operations a PATCH.`);
  const out: PatchOp[] = [];
  for (const raw of body.Operations as unknown[]) {
    if (!isPlainObject(raw) || typeof raw.op !== 'string') throw invalidSyntax('Each operation has an op.');
    const op = raw.op.toLowerCase();
    if (op !== 'add' && op !== 'replace' && op !== 'remove') throw invalidValue(`"${raw.op}" is not a PATCH operation (add, replace, remove).`);
    const path = typeof raw.path === 'string' && raw.path.trim() !== '' ? corePath(raw.path, coreSchema) : undefined;
    if (typeof raw.path === 'string' && raw.path.trim() !== '' && path === undefined) continue;
    if (op === 'remove') {
      if (path === undefined) throw new ScimError(400, 'noTarget', 'A remove operation names a path.');
      out.push(withValue('remove', path, raw.value));
      continue;
    }
    if (path !== undefined) {
      out.push(withValue(op, path, raw.value));
      continue;
    }
    if (!isPlainObject(raw.value)) throw invalidValue(`An ${op} without a path carries an object.`);
    for (const [key, value] of Object.entries(raw.value)) {
      const p = corePath(key, coreSchema);
      if (p === undefined || IGNORED.has(p.toLowerCase())) continue;
      out.push(withValue(op, p, value));
    }
  }
  return out;
}

/** scim-patch's errors carry RFC 7644's scimType. */
const scimTypeOf = (err: unknown): ScimType => {
  const code = (err as { scimCode?: unknown }).scimCode;
  return code === 'invalidPath' || code === 'noTarget' || code === 'invalidValue' || code === 'mutability' ? code : 'invalidValue';
};

/** `resource` with `ops` applied (a copy); a 400 with the library's scimType when an operation does not apply. */
export function applyPatch<T extends Record<string, unknown>>(resource: T, ops: readonly PatchOp[]): T {
  if (ops.length === 0) return resource;
  try {
    const patched = scimPatch(resource as unknown as ScimResource, ops as unknown as ScimPatchOperation[], { mutateDocument: false, treatMissingAsAdd: true });
    return patched as unknown as T;
  } catch (err) {
    if (err instanceof Error && 'scimCode' in err) throw new ScimError(400, scimTypeOf(err), err.message);
    throw err;
  }
}
