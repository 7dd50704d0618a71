/** The behaviour of each collection: the defaults, with the overrides of the collections that differ. */
import { collectionByName } from '../model/collections.ts';
import { instanceBehaviour, userBehaviour } from './accounts.ts';
import { defaultBehaviour, type Behaviour, type Override } from './behaviour.ts';
import { notFound } from '../errors.ts';
import { folderBehaviour } from './folder-behaviour.ts';
import { identityProviderBehaviour } from './identity-providers.ts';
import { inputBehaviour } from './input-status.ts';
import { peopleBehaviour } from './people.ts';

const OVERRIDES: Readonly<Record<string, Override>> = {
  people: peopleBehaviour,
  inputs: inputBehaviour,
  folders: folderBehaviour,
  instances: instanceBehaviour,
  users: userBehaviour,
  identityproviders: identityProviderBehaviour,
};

const cache = new Map<string, Behaviour>();

/** The behaviour of a collection by name (404 for a name that is not a collection). */
export function behaviourOf(collection: string): Behaviour {
  let b = cache.get(collection);
  if (!b) {
    const def = collectionByName(collection);
    if (!def) throw notFound(`There is no collection named ${collection}.`);
    const base = defaultBehaviour(def);
    b = OVERRIDES[collection]?.(base) ?? base;
    cache.set(collection, b);
  }
  return b;
}
