/**
 * The object collections of the API, each with the family (Lambda function) that serves it,
 * the `$type` names it holds, and the rules that differ between collections. The route table
 * and the generic collection behaviour are both derived from this list.
 */

export type Family =
  | 'service'
  | 'token'
  | 'folders'
  | 'people'
  | 'devices'
  | 'schedules'
  | 'access'
  | 'apps'
  | 'alarms'
  | 'events'
  | 'search'
  | 'webhooks'
  | 'websocket'
  | 'fanout'
  | 'mqttauth';

export interface CollectionDef {
  /** Path segment, lower case (`people`). */
  readonly name: string;
  readonly family: Family;
  /** The type a POST creates when the body names a type this collection accepts. */
  readonly typeName: string;
  /**
   * Type names accepted in this collection besides `typeName` (derived types such as
   * AscInputInfo). `'*'` accepts any type name (controllers: other controller types kept as sent).
   */
  readonly acceptsTypes?: readonly string[] | '*';
  /** The spec's tables say PUT answers 204 No content for these. */
  readonly putAnswersNoContent?: boolean;
  /** CommonName is unique within the folder (409 DuplicateName). */
  readonly uniqueName?: boolean;
  /** Objects of this collection can be the source of a connection (relation kinds). */
  readonly relations?: boolean;
  /** Sub-resources accepting PUT (`inputs/<key>/status`, `people/<key>/accesslevels`, `people/<key>/scheduledaccesslevelbatch`). */
  readonly putLinks?: readonly string[];
  /** Sub-resources whose items accept PUT (`people/<key>/cards/<card key>`). */
  readonly putLinkItems?: readonly string[];
}

export const COLLECTIONS: readonly CollectionDef[] = [
  {
    name: 'people',
    family: 'people',
    typeName: 'PersonInfo',
    relations: true,
    putLinks: ['accesslevels', 'scheduledaccesslevelbatch'],
    putLinkItems: ['cards'],
  },
  {
    name: 'inputs',
    family: 'devices',
    typeName: 'InputInfo',
    acceptsTypes: ['AscInputInfo'],
    putAnswersNoContent: true,
    relations: true,
    putLinks: ['status'],
  },
  { name: 'outputs', family: 'devices', typeName: 'OutputInfo', relations: true },
  { name: 'readers', family: 'devices', typeName: 'VendorReaderInfo', acceptsTypes: '*', relations: true },
  { name: 'controllers', family: 'devices', typeName: 'Lp1502Info', acceptsTypes: '*' },
  {
    name: 'inputscanners',
    family: 'devices',
    typeName: 'InputScannerInfo',
    putAnswersNoContent: true,
    relations: true,
  },
  { name: 'doors', family: 'devices', typeName: 'DoorInfo' },
  { name: 'servicecontainers', family: 'devices', typeName: 'ServiceContainerInfo', putAnswersNoContent: true },
  { name: 'schedules', family: 'schedules', typeName: 'ScheduleInfo', putAnswersNoContent: true, uniqueName: true },
  { name: 'holidays', family: 'schedules', typeName: 'HolidayInfo', uniqueName: true },
  { name: 'accesslevels', family: 'access', typeName: 'AccessLevelInfo', uniqueName: true, relations: true },
  { name: 'badgetypes', family: 'access', typeName: 'BadgeTypeInfo', uniqueName: true },
  { name: 'cardformats', family: 'access', typeName: 'CardFormatInfo', uniqueName: true },
  { name: 'apps', family: 'apps', typeName: 'AppInfo', uniqueName: true },
  { name: 'alarmdefinitions', family: 'alarms', typeName: 'AlarmDefinitionInfo', uniqueName: true },
  { name: 'folders', family: 'folders', typeName: 'FolderInfo' },
  { name: 'instances', family: 'folders', typeName: 'InstanceInfo' },
  { name: 'users', family: 'folders', typeName: 'UserInfo' },
  // Single sign-on: the OpenID Connect providers of an instance (Administrators only).
  { name: 'identityproviders', family: 'folders', typeName: 'IdentityProviderInfo', uniqueName: true },
];

const byName = new Map(COLLECTIONS.map((c) => [c.name, c]));

/** The collection definition for a path segment, or undefined. */
export function collectionByName(name: string): CollectionDef | undefined {
  return byName.get(name);
}

/** Collections whose objects are peripherals (`/peripherals/<key>` resolves them). */
export const PERIPHERAL_COLLECTIONS: readonly string[] = ['readers', 'inputs', 'outputs'];
