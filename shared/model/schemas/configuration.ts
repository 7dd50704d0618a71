/**
 * Configuration types whose fields the spec does not show beyond BaseInfo: access levels, badge
 * types, card formats, apps, alarm definitions, folders. Every other field is kept as sent.
 */
import { baseInfoSchema } from './common.ts';

export const accessLevelInfoSchema = baseInfoSchema;
export const badgeTypeInfoSchema = baseInfoSchema;
export const cardFormatInfoSchema = baseInfoSchema;
export const appInfoSchema = baseInfoSchema;
export const alarmDefinitionInfoSchema = baseInfoSchema;
export const folderInfoSchema = baseInfoSchema;
