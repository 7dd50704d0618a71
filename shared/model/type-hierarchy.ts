/**
 * The type hierarchy that `_t` in a search follows: a type matches its derived types too
 * (`Input` matches AscInputInfo). Types a client invents (controllers kept as sent) have no
 * known base and match only themselves and BaseInfo.
 */

const BASE: Readonly<Record<string, string>> = {
  PeripheralInfo: 'BaseInfo',
  InputInfo: 'PeripheralInfo',
  AscInputInfo: 'InputInfo',
  OutputInfo: 'PeripheralInfo',
  ReaderInfo: 'PeripheralInfo',
  VendorReaderInfo: 'ReaderInfo',
  ControllerInfo: 'BaseInfo',
  Lp1502Info: 'ControllerInfo',
};

/** The type and every type above it, nearest first, ending with BaseInfo. */
export function typeChain(typeName: string): string[] {
  const chain = [typeName];
  for (let t = BASE[typeName]; t; t = BASE[t]) chain.push(t);
  if (chain[chain.length - 1] !== 'BaseInfo') chain.push('BaseInfo');
  return chain;
}

/** `Person` and `PersonInfo` both name PersonInfo. */
export function canonicalTypeName(name: string): string {
  return name.endsWith('Info') ? name : `${name}Info`;
}

/** The `_t` values a stored object answers to: its chain, each with and without `Info`. */
export function discriminators(typeName: string): string[] {
  return typeChain(typeName).flatMap((t) => (t.endsWith('Info') ? [t, t.slice(0, -4)] : [t]));
}

/**
 * The stored types a requested type name selects, among `known` stored types: the type itself
 * and every known type derived from it.
 */
export function typesSelectedBy(requested: string, known: readonly string[]): string[] {
  const want = canonicalTypeName(requested);
  const out = new Set<string>([want]);
  for (const k of known) if (typeChain(k).includes(want)) out.add(k);
  if (want === 'BaseInfo') known.forEach((k) => out.add(k));
  return [...out];
}
