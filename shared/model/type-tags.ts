/**
 * `$type` tags: output uses the configured namespace (`<ns>.<TypeName>, <ns>`); input matches on
 * the type name whatever the namespace, so clients written for the original service keep working.
 */

/** The `$type` value of a type name in a namespace. */
export function typeTag(namespace: string, typeName: string): string {
  return `${namespace}.${typeName}, ${namespace}`;
}

/**
 * The bare type name of a `$type` value: `Vendor.Model.PersonInfo, Vendor.Model` → `PersonInfo`.
 * Returns undefined for anything that is not a non-empty string naming a type.
 */
export function typeNameOf($type: unknown): string | undefined {
  if (typeof $type !== 'string') return undefined;
  const full = $type.split(',')[0]!.trim();
  const name = full.slice(full.lastIndexOf('.') + 1);
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : undefined;
}
