/**
 * Where an object lives: its folder, the chain of folders above it, and its instances. Computed
 * once when the object is created (folders and instances do not move), stored on the item, and
 * used for tenant scope checks without another read.
 */
import { ObjectId } from 'bson';
import type { StoredObject } from '../db/objects-repo.ts';

/** A new 24-hex, time-ordered object key. */
export function newKey(): string {
  return new ObjectId().toHexString();
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

/** The folder keys that contain a folder-like object, itself included (root first). */
export function chainOf(folderLike: StoredObject): string[] {
  return [...folderLike.path, folderLike.key];
}

/** True when `instanceKey` is `target` itself or one of the folders above it. */
export function isWithin(instanceKey: string, target: Pick<StoredObject, 'key' | 'path'>): boolean {
  return target.key === instanceKey || target.path.includes(instanceKey);
}
