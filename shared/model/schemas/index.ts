/**
 * One schema per type name. Types the registry does not name (other controller or reader types
 * kept as sent) are validated as BaseInfo.
 */
import type * as z from 'zod/mini';
import { baseInfoSchema } from './common.ts';
import {
  accessLevelInfoSchema,
  alarmDefinitionInfoSchema,
  appInfoSchema,
  badgeTypeInfoSchema,
  cardFormatInfoSchema,
  folderInfoSchema,
} from './configuration.ts';
import {
  doorInfoSchema,
  inputInfoSchema,
  inputScannerInfoSchema,
  inputStatusItemSchema,
  lp1502InfoSchema,
  outputInfoSchema,
  serviceContainerInfoSchema,
  vendorReaderInfoSchema,
} from './devices.ts';
import { instanceInfoSchema, userInfoSchema } from './instance.ts';
import { noteInfoSchema } from './note.ts';
import { cardAssignmentInfoSchema, personInfoSchema } from './person.ts';
import { holidayInfoSchema, scheduleInfoSchema } from './schedules.ts';

export * from './common.ts';
export * from './configuration.ts';
export * from './devices.ts';
export * from './instance.ts';
export * from './note.ts';
export * from './person.ts';
export * from './schedules.ts';

export type TypeSchema = z.ZodMiniType<Record<string, unknown>>;

const SCHEMAS: Readonly<Record<string, TypeSchema>> = Object.freeze({
  PersonInfo: personInfoSchema,
  InputInfo: inputInfoSchema,
  AscInputInfo: inputInfoSchema,
  OutputInfo: outputInfoSchema,
  VendorReaderInfo: vendorReaderInfoSchema,
  Lp1502Info: lp1502InfoSchema,
  InputScannerInfo: inputScannerInfoSchema,
  DoorInfo: doorInfoSchema,
  ServiceContainerInfo: serviceContainerInfoSchema,
  ScheduleInfo: scheduleInfoSchema,
  HolidayInfo: holidayInfoSchema,
  AccessLevelInfo: accessLevelInfoSchema,
  BadgeTypeInfo: badgeTypeInfoSchema,
  CardFormatInfo: cardFormatInfoSchema,
  AppInfo: appInfoSchema,
  AlarmDefinitionInfo: alarmDefinitionInfoSchema,
  FolderInfo: folderInfoSchema,
  InstanceInfo: instanceInfoSchema,
  UserInfo: userInfoSchema,
  InputStatusItem: inputStatusItemSchema,
  NoteInfo: noteInfoSchema,
  CardAssignmentInfo: cardAssignmentInfoSchema,
});

/** The schema of a bare type name (BaseInfo for a type the registry does not know). */
export function schemaFor(typeName: string): TypeSchema {
  return SCHEMAS[typeName] ?? baseInfoSchema;
}
