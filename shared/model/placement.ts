/**
 * Where an object lives: its folder, the chain of folders above it, and its instances. Computed
 * once when the object is created (folders and instances do not move), stored on the item, and
 * used for tenant scope checks without another read.
 */
import { randomBytes } from 'node:crypto';
import type { StoredObject } from './stored-object.ts';

// Keys are MongoDB ObjectIds, as the original service's: 4 bytes of seconds since the epoch, 5
// random bytes drawn once per process, 3 bytes of a counter that starts at random. Made here
// rather than with the bson package, which only the events code needs: every bundle would carry it.
const PROCESS_UNIQUE = randomBytes(5).toString('hex');
let counter = randomBytes(3).readUIntBE(0, 3);

/** A new 24-hex, time-ordered object key (an ObjectId). */
export function newKey(): string {
  counter = (counter + 1) % 0x100_0000;
  const seconds = Math.floor(Date.now() / 1000) >>> 0;
  return `${seconds.toString(16).padStart(8, '0')}${PROCESS_UNIQUE}${counter.toString(16).padStart(6, '0')}`;
}

export interface Placement {
  readonly folder: string;
  readonly path: readonly string[];
  readonly instances: readonly string[];
}

/** Placement of an object created inside `container` (a folder or an instance). */
export function placeIn(container: StoredObject): Placement {
  return {
    folder: container.key,
    path: [...container.path, container.key],
    // An instance lists itself last in `instances`, a folder lists its instance's chain: either way
    // the container's chain is the new object's.
    instances: [...container.instances],
  };
}

/** Placement of a new instance `key` created inside `parent` (undefined for the root instance). */
export function placeInstance(key: string, parent: StoredObject | undefined): Placement {
  if (!parent) return { folder: '', path: [], instances: [key] };
  const p = placeIn(parent);
  return { ...p, instances: [...p.instances, key] };
}

/** True when `instanceKey` is `target` itself or one of the folders above it. */
export function isWithin(instanceKey: string, target: Pick<StoredObject, 'key' | 'path'>): boolean {
  return target.key === instanceKey || target.path.includes(instanceKey);
}
