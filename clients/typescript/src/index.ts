/**
 * `@gatehouse/client`: the typed client of the Gatehouse API.
 *
 * ```ts
 * const gh = await GatehouseClient.login({ baseUrl: 'http://localhost:3000', instance: 'Gatehouse', username: 'admin', password });
 * for await (const person of gh.list('people', gh.instanceKey)) console.log(person.CommonName);
 * ```
 */
export {
  GatehouseClient,
  type ClientOptions,
  type Collection,
  type DataOf,
  type FetchLike,
  type ListItem,
  type ListOptions,
  type ListQuery,
  type PasswordLogin,
  type SavedSession,
  type Schemas,
} from './client.js';
export { GatehouseError } from './errors.js';
export type { components, operations, paths } from './schema.js';
export type { TokenSet } from './session.js';
