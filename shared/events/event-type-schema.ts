/**
 * The zod schema of an EventTypeInfo body: BaseInfo plus the spec's fields, each Moniker with a
 * Nickname. Loaded by the first event type body validated (event-type-body.ts) and by the OpenAPI
 * document, not by a function's cold start.
 */
import * as z from 'zod/mini';
import { LIMITS } from '../model/limits.ts';
import { builtOnce, commonSchemas, optionalBoolean, optionalString } from '../model/schemas/index.ts';

// zod/mini, built on first use, as the model's schemas (see model/schemas/common.ts): one classic
// call, one `.check`.
export const eventTypeInfoSchema = builtOnce(() => {
  const int32 = z
    .number()
    .check(z.int())
    .check(z.gte(-(2 ** 31)))
    .check(z.lte(2 ** 31 - 1));
  return z.looseObject({
    ...commonSchemas().baseInfoShape,
    MessageTemplateLong: optionalString(),
    MessageTemplateShort: optionalString(),
    NonLogging: optionalBoolean(),
    Priority: z.nullish(int32),
    RequiresAcknowledgement: optionalBoolean(),
    Monikers: z.nullish(
      z
        .array(
          z.looseObject({
            $type: z.optional(z.string().check(z.maxLength(LIMITS.code))),
            Namespace: optionalString(LIMITS.code),
            Nickname: z.string().check(z.minLength(1)).check(z.maxLength(LIMITS.code)),
          }),
        )
        .check(z.maxLength(100)),
    ),
  });
});
