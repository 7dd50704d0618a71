/**
 * One schema per type name. Types the registry does not name (other controller or reader types
 * kept as sent) are validated as BaseInfo. The schemas are built on the first validation (see
 * `builtOnce` in common.ts), not when a function loads.
 */
import type * as z from 'zod/mini';
import { builtOnce, commonSchemas } from './common.ts';
import { deviceSchemas } from './devices.ts';
import { identityProviderSchemas } from './identity-provider.ts';
import { accountSchemas } from './instance.ts';
import { noteInfoSchema } from './note.ts';
import { personSchemas } from './person.ts';
import { scheduleInfoSchema } from './schedules.ts';

export * from './common.ts';
export * from './devices.ts';
export * from './identity-provider.ts';
export * from './instance.ts';
export * from './note.ts';
export * from './person.ts';
export * from './schedules.ts';

export type TypeSchema = z.ZodMiniType<Record<string, unknown>>;

const schemas = builtOnce((): Readonly<Record<string, TypeSchema>> => {
  // The types whose fields the spec does not show beyond BaseInfo (every other field is kept as
  // sent): inputs (AscInputInfo derives from InputInfo), outputs, readers, controllers, doors,
  // holidays, access levels, badge types, card formats, apps, alarm definitions, folders.
  const { baseInfoSchema } = commonSchemas();
  const devices = deviceSchemas();
  const person = personSchemas();
  const accounts = accountSchemas();
  return Object.freeze({
    PersonInfo: person.personInfoSchema,
    InputInfo: baseInfoSchema,
    AscInputInfo: baseInfoSchema,
    OutputInfo: baseInfoSchema,
    VendorReaderInfo: baseInfoSchema,
    Lp1502Info: baseInfoSchema,
    InputScannerInfo: devices.inputScannerInfoSchema,
    DoorInfo: baseInfoSchema,
    ServiceContainerInfo: devices.serviceContainerInfoSchema,
    ScheduleInfo: scheduleInfoSchema(),
    HolidayInfo: baseInfoSchema,
    AccessLevelInfo: baseInfoSchema,
    BadgeTypeInfo: baseInfoSchema,
    CardFormatInfo: baseInfoSchema,
    AppInfo: baseInfoSchema,
    AlarmDefinitionInfo: baseInfoSchema,
    FolderInfo: baseInfoSchema,
    InstanceInfo: accounts.instanceInfoSchema,
    UserInfo: accounts.userInfoSchema,
    IdentityProviderInfo: identityProviderSchemas().identityProviderInfoSchema,
    InputStatusItem: devices.inputStatusItemSchema,
    NoteInfo: noteInfoSchema(),
    CardAssignmentInfo: person.cardAssignmentInfoSchema,
  });
});

/** The schema of a bare type name (BaseInfo for a type the registry does not know). */
export function schemaFor(typeName: string): TypeSchema {
  return schemas()[typeName] ?? commonSchemas().baseInfoSchema;
}
