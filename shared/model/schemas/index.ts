/**
 * One schema per type name. Types the registry does not name (other controller or reader types
 * kept as sent) are validated as BaseInfo. The schemas are built on the first validation (see
 * `builtOnce` in common.ts), not when a function loads.
 */
import type * as z from 'zod/mini';
import { builtOnce, commonSchemas } from './common.ts';
import { deviceSchemas } from './devices.ts';
import { accountSchemas } from './instance.ts';
import { noteInfoSchema } from './note.ts';
import { personSchemas } from './person.ts';
import { scheduleSchemas } from './schedules.ts';

export * from './common.ts';
export * from './devices.ts';
export * from './instance.ts';
export * from './note.ts';
export * from './person.ts';
export * from './schedules.ts';

export type TypeSchema = z.ZodMiniType<Record<string, unknown>>;

const schemas = builtOnce((): Readonly<Record<string, TypeSchema>> => {
  // The types whose fields the spec does not show beyond BaseInfo (every other field is kept as
  // sent): inputs (AscInputInfo derives from InputInfo), outputs, doors, access levels, badge
  // types, card formats, apps, alarm definitions, folders. Readers and controllers add the fields
  // the access decisions read.
  const { baseInfoSchema } = commonSchemas();
  const devices = deviceSchemas();
  const person = personSchemas();
  const accounts = accountSchemas();
  const schedules = scheduleSchemas();
  return Object.freeze({
    PersonInfo: person.personInfoSchema,
    InputInfo: baseInfoSchema,
    AscInputInfo: baseInfoSchema,
    OutputInfo: baseInfoSchema,
    VendorReaderInfo: devices.readerInfoSchema,
    Lp1502Info: devices.controllerInfoSchema,
    InputScannerInfo: devices.inputScannerInfoSchema,
    DoorInfo: baseInfoSchema,
    ServiceContainerInfo: devices.serviceContainerInfoSchema,
    ScheduleInfo: schedules.scheduleInfoSchema,
    HolidayInfo: schedules.holidayInfoSchema,
    AccessLevelInfo: baseInfoSchema,
    BadgeTypeInfo: baseInfoSchema,
    CardFormatInfo: baseInfoSchema,
    AppInfo: baseInfoSchema,
    AlarmDefinitionInfo: baseInfoSchema,
    FolderInfo: baseInfoSchema,
    InstanceInfo: accounts.instanceInfoSchema,
    UserInfo: accounts.userInfoSchema,
    InputStatusItem: devices.inputStatusItemSchema,
    NoteInfo: noteInfoSchema(),
    CardAssignmentInfo: person.cardAssignmentInfoSchema,
  });
});

/**
 * The schema of the collections that keep vendor types as sent (`acceptsTypes: '*'`): any reader
 * type has a reader's fields, any controller type a controller's.
 */
const collectionSchemas = builtOnce((): Readonly<Record<string, TypeSchema>> => {
  const devices = deviceSchemas();
  return Object.freeze({ readers: devices.readerInfoSchema, controllers: devices.controllerInfoSchema });
});

/**
 * The schema of a bare type name; a type the registry does not know is validated as its
 * collection's (a vendor reader type as a reader) when `collection` is given, else as BaseInfo.
 */
export function schemaFor(typeName: string, collection?: string): TypeSchema {
  return schemas()[typeName] ?? (collection === undefined ? undefined : collectionSchemas()[collection]) ?? commonSchemas().baseInfoSchema;
}
