/**
 * The original service's built-in apps, present in every installation's root instance as the
 * system app is (system-app.ts): fixed, documented keys, not stored objects. A posting finds them
 * as it finds any app (its `AppKey` is the key or a moniker Nickname), after the apps of the
 * sink's chain: an instance's own app with the same Nickname takes precedence.
 *
 * | what                                   | Key                        | Moniker (Namespace / Nickname)                              | Priority |
 * | -------------------------------------- | -------------------------- | ----------------------------------------------------------- | -------- |
 * | app `MercuryCommands`                  | `000000000000000000000011` | `MercuryServiceCommands` / `MercuryCommands`                |          |
 * | card read command                      | `000000000000000000000012` | `MercuryServiceCommands` / `mercury:command-simulateCardRead` | 0      |
 * | app `MercuryService` (Mercury Driver Service) | `000000000000000000000021` | `MercuryService` / `MercuryService`                  |          |
 * | "Access Granted"                       | `000000000000000000000022` | `MercuryService` / `access-granted`                         | 10       |
 * | "Access Denied"                        | `000000000000000000000023` | `MercuryService` / `access-denied`                          | 20       |
 * | door unlock command                    | `000000000000000000000013` | `MercuryServiceCommands` / `mercury:command-unlockDoor`     | 0        |
 * | "Door Unlocked"                        | `000000000000000000000024` | `MercuryService` / `door-unlocked`                          | 10       |
 * | "Reader Mode Changed"                  | `000000000000000000000025` | `MercuryService` / `reader-mode-changed`                    | 15       |
 * | "Lockdown Ended"                       | `000000000000000000000026` | `MercuryService` / `lockdown-ended`                         | 30       |
 * | "Lockdown Started" (requires acknowledgement) | `000000000000000000000027` | `MercuryService` / `lockdown-started`              | 50       |
 *
 * The door types (shared/access/doors.ts) follow the doors issue: a lockdown's start is the
 * highest priority of them all and the only one an operator must acknowledge.
 */
import type { StoredObject } from '../model/stored-object.ts';

export const MERCURY_COMMANDS_APP_KEY = '000000000000000000000011';
export const SIMULATE_CARD_READ_TYPE_KEY = '000000000000000000000012';
const MERCURY_SERVICE_APP_KEY = '000000000000000000000021';
const ACCESS_GRANTED_TYPE_KEY = '000000000000000000000022';
const ACCESS_DENIED_TYPE_KEY = '000000000000000000000023';
export const UNLOCK_DOOR_TYPE_KEY = '000000000000000000000013';
const DOOR_UNLOCKED_TYPE_KEY = '000000000000000000000024';
const READER_MODE_CHANGED_TYPE_KEY = '000000000000000000000025';
const LOCKDOWN_ENDED_TYPE_KEY = '000000000000000000000026';
const LOCKDOWN_STARTED_TYPE_KEY = '000000000000000000000027';

const COMMANDS_NAMESPACE = 'MercuryServiceCommands';
const SERVICE_NAMESPACE = 'MercuryService';
const SIMULATE_CARD_READ = 'mercury:command-simulateCardRead';
const UNLOCK_DOOR = 'mercury:command-unlockDoor';

/** The Nicknames of the door event types of `MercuryService`. */
export type DoorEventNickname = 'door-unlocked' | 'reader-mode-changed' | 'lockdown-started' | 'lockdown-ended';

interface TypeDef {
  readonly key: string;
  readonly name: string;
  readonly namespace: string;
  readonly nickname: string;
  readonly priority: number;
  /** Events of this type require an acknowledgement (Lockdown Started). */
  readonly requiresAck?: boolean;
}

interface AppDef {
  readonly key: string;
  readonly name: string;
  readonly namespace: string;
  readonly nickname: string;
  readonly types: readonly TypeDef[];
}

const APPS: readonly AppDef[] = [
  {
    key: MERCURY_COMMANDS_APP_KEY,
    name: 'MercuryCommands',
    namespace: COMMANDS_NAMESPACE,
    nickname: 'MercuryCommands',
    types: [
      { key: SIMULATE_CARD_READ_TYPE_KEY, name: 'Simulate Card Read', namespace: COMMANDS_NAMESPACE, nickname: SIMULATE_CARD_READ, priority: 0 },
      { key: UNLOCK_DOOR_TYPE_KEY, name: 'Unlock Door', namespace: COMMANDS_NAMESPACE, nickname: UNLOCK_DOOR, priority: 0 },
    ],
  },
  {
    key: MERCURY_SERVICE_APP_KEY,
    name: 'Mercury Driver Service',
    namespace: SERVICE_NAMESPACE,
    nickname: 'MercuryService',
    types: [
      { key: ACCESS_GRANTED_TYPE_KEY, name: 'Access Granted', namespace: SERVICE_NAMESPACE, nickname: 'access-granted', priority: 10 },
      { key: ACCESS_DENIED_TYPE_KEY, name: 'Access Denied', namespace: SERVICE_NAMESPACE, nickname: 'access-denied', priority: 20 },
      { key: DOOR_UNLOCKED_TYPE_KEY, name: 'Door Unlocked', namespace: SERVICE_NAMESPACE, nickname: 'door-unlocked', priority: 10 },
      { key: READER_MODE_CHANGED_TYPE_KEY, name: 'Reader Mode Changed', namespace: SERVICE_NAMESPACE, nickname: 'reader-mode-changed', priority: 15 },
      { key: LOCKDOWN_ENDED_TYPE_KEY, name: 'Lockdown Ended', namespace: SERVICE_NAMESPACE, nickname: 'lockdown-ended', priority: 30 },
      { key: LOCKDOWN_STARTED_TYPE_KEY, name: 'Lockdown Started', namespace: SERVICE_NAMESPACE, nickname: 'lockdown-started', priority: 50, requiresAck: true },
    ],
  },
];

const moniker = (namespace: string, nickname: string) => ({ $type: 'MonikerItem', Namespace: namespace, Nickname: nickname });

function appObject(a: AppDef, rootInstance: string): StoredObject {
  return {
    key: a.key,
    collection: 'apps',
    type: 'AppInfo',
    folder: rootInstance,
    path: [rootInstance],
    instances: [rootInstance],
    version: 1,
    doc: { $type: 'AppInfo', CommonName: a.name, Monikers: [moniker(a.namespace, a.nickname)] },
  };
}

/** The built-in app a posting's `AppKey` names (its key or Nickname), placed in `rootInstance`. */
export function builtinApp(name: string, rootInstance: string): StoredObject | undefined {
  const lower = name.toLowerCase();
  const a = APPS.find((x) => x.key === lower || x.nickname === name);
  return a ? appObject(a, rootInstance) : undefined;
}

export const isBuiltinAppKey = (key: string): boolean => APPS.some((a) => a.key === key);

/** The event type of a built-in app by moniker (an empty Namespace matches the Nickname alone). */
export function builtinEventType(app: StoredObject, m: { readonly Namespace: string; readonly Nickname: string }): StoredObject | undefined {
  const a = APPS.find((x) => x.key === app.key);
  const t = a?.types.find((x) => x.nickname === m.Nickname && (m.Namespace === '' || m.Namespace === x.namespace));
  if (!a || !t) return undefined;
  return {
    key: t.key,
    collection: 'eventtypes',
    type: 'EventTypeInfo',
    folder: app.key,
    path: [...app.path, app.key],
    instances: app.instances,
    version: 1,
    doc: {
      $type: 'EventTypeInfo',
      CommonName: t.name,
      Monikers: [moniker(t.namespace, t.nickname)],
      Priority: t.priority,
      ...(t.requiresAck ? { RequiresAcknowledgement: true } : {}),
    },
  };
}

/** Every event type of a built-in app (placed as `app` is), in key order. */
export function builtinEventTypes(app: StoredObject): StoredObject[] {
  const a = APPS.find((x) => x.key === app.key);
  return (a?.types ?? [])
    .map((t) => builtinEventType(app, { Namespace: t.namespace, Nickname: t.nickname })!)
    .sort((x, y) => x.key.localeCompare(y.key));
}

/**
 * A built-in event type by its fixed key (and, when given, its app's key), placed in
 * `rootInstance`: what an alarm definition links and lists (the type is no stored object).
 */
export function builtinEventTypeByKey(key: string, rootInstance: string, appKey?: string): StoredObject | undefined {
  const a = APPS.find((x) => x.types.some((t) => t.key === key));
  const t = a?.types.find((x) => x.key === key);
  if (!a || !t || (appKey !== undefined && appKey !== a.key)) return undefined;
  return builtinEventType(appObject(a, rootInstance), { Namespace: t.namespace, Nickname: t.nickname });
}

/** The result type of a card read: "Access Granted" or "Access Denied" of `MercuryService`, with its moniker and priority. */
export function accessResultType(
  granted: boolean,
  rootInstance: string,
): { readonly app: StoredObject; readonly type: StoredObject; readonly moniker: { readonly Namespace: string; readonly Nickname: string }; readonly priority: number } {
  const a = APPS[1]!;
  const t = a.types[granted ? 0 : 1]!;
  const app = appObject(a, rootInstance);
  return { app, type: builtinEventType(app, { Namespace: t.namespace, Nickname: t.nickname })!, moniker: { Namespace: t.namespace, Nickname: t.nickname }, priority: t.priority };
}

/** A door event type of `MercuryService` (doors issue): the app, the type, and whether it requires acknowledgement. */
export function doorEventType(nickname: DoorEventNickname, rootInstance: string): { readonly app: StoredObject; readonly type: StoredObject; readonly requiresAck: boolean } {
  const app = appObject(APPS[1]!, rootInstance);
  const type = builtinEventType(app, { Namespace: SERVICE_NAMESPACE, Nickname: nickname })!;
  return { app, type, requiresAck: type.doc.RequiresAcknowledgement === true };
}
