/**
 * jose's JWK import alone, for `keyImporter` (keys.ts) to load with `import()`: a package module
 * reached by `import()` keeps every export (jose's SPKI, X.509 and PKCS #8 importers with their
 * ASN.1 code), and a module reached both ways is loaded at start; named here, only `importJWK`
 * is bundled.
 */
export { importJWK } from 'jose/key/import';
