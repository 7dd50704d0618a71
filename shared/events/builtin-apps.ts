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
 */
import type { StoredObject } from '../model/stored-object.ts';

export const MERCURY_COMMANDS_APP_KEY = '000000000000000000000011';
export const SIMULATE_CARD_READ_TYPE_KEY = '000000000000000000000012';
export const MERCURY_SERVICE_APP_KEY = '000000000000000000000021';
export const ACCESS_GRANTED_TYPE_KEY = '000000000000000000000022';
export const ACCESS_DENIED_TYPE_KEY = '000000000000000000000023';

export const COMMANDS_NAMESPACE = 'MercuryServiceCommands';
export const SERVICE_NAMESPACE = 'MercuryService';
export const SIMULATE_CARD_READ = 'mercury:command-simulateCardRead';

interface TypeDef {
  readonly key: string;
  readonly name: string;
  readonly namespace: string;
  readonly nickname: string;
  readonly priority: number;
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
    types: [{ key: SIMULATE_CARD_READ_TYPE_KEY, name: 'Simulate Card Read', namespace: COMMANDS_NAMESPACE, nickname: SIMULATE_CARD_READ, priority: 0 }],
  },
  {
    key: MERCURY_SERVICE_APP_KEY,
    name: 'Mercury Driver Service',
    namespace: SERVICE_NAMESPACE,
    nickname: 'MercuryService',
    types: [
      { key: ACCESS_GRANTED_TYPE_KEY, name: 'Access Granted', namespace: SERVICE_NAMESPACE, nickname: 'access-granted', priority: 10 },
      { key: ACCESS_DENIED_TYPE_KEY, name: 'Access Denied', namespace: SERVICE_NAMESPACE, nickname: 'access-denied', priority: 20 },
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
    doc: { $type: 'EventTypeInfo', CommonName: t.name, Monikers: [moniker(t.namespace, t.nickname)], Priority: t.priority },
  };
}

/** The result type of a card read: "Access Granted" or "Access Denied" of `MercuryService`. */
export function accessResultType(granted: boolean, rootInstance: string): { readonly app: StoredObject; readonly type: StoredObject } {
  const app = appObject(APPS[1]!, rootInstance);
  const type = builtinEventType(app, { Namespace: SERVICE_NAMESPACE, Nickname: granted ? 'access-granted' : 'access-denied' })!;
  return { app, type };
}
