import { describe, expect, it } from 'vitest';
import { accountSchemas, personSchemas, schemaFor, scheduleInfoSchema } from '#shared/model/schemas/index.ts';

const { addressSchema, personInfoSchema } = personSchemas();
const { instanceInfoSchema, userInfoSchema } = accountSchemas();

describe('type schemas', () => {
  it('keep fields they do not know (vendor fields pass through)', () => {
    const r = personInfoSchema.safeParse({ $type: 'PersonInfo', GivenName: 'A', FacilityCode: 5, Vendor: { x: [1] } });
    expect(r.success).toBe(true);
    expect(r.data).toMatchObject({ FacilityCode: 5, Vendor: { x: [1] } });
  });

  it('select an address type by its $type', () => {
    expect(addressSchema.safeParse({ $type: 'EmailAddressInfo', MailTo: 'a@b' }).success).toBe(true);
    expect(addressSchema.safeParse({ $type: 'PhoneInfo', Number: 5 }).success).toBe(false);
    const none = addressSchema.safeParse({ City: 'x' });
    expect(none.success).toBe(false);
    expect(none.error!.issues[0]!.path).toEqual(['$type']);
  });

  it('reject fields of the wrong JSON type', () => {
    expect(scheduleInfoSchema().safeParse({ $type: 'ScheduleInfo', Index: '1' }).success).toBe(false);
    expect(scheduleInfoSchema().safeParse({ $type: 'ScheduleInfo', OneOffDate: 'someday' }).success).toBe(false);
    expect(scheduleInfoSchema().safeParse({ $type: 'ScheduleInfo', OneOffDate: null, Index: 2 }).success).toBe(true);
  });

  it('require login names without blanks around them, and no backslash in instance names', () => {
    expect(userInfoSchema.safeParse({ $type: 'UserInfo', CommonName: ' bob' }).success).toBe(false);
    expect(userInfoSchema.safeParse({ $type: 'UserInfo' }).success).toBe(false);
    expect(instanceInfoSchema.safeParse({ $type: 'InstanceInfo', CommonName: 'A\\B' }).success).toBe(false);
    expect(instanceInfoSchema.safeParse({ $type: 'InstanceInfo', CommonName: 'Acme', SecurityLevel: 'Extreme' }).success).toBe(false);
  });

  it('validate unknown type names as BaseInfo', () => {
    expect(schemaFor('Mx8Info').safeParse({ $type: 'Mx8Info', Anything: 1 }).success).toBe(true);
    expect(schemaFor('Mx8Info').safeParse({ $type: 'Mx8Info', Tags: 'x' }).success).toBe(false);
  });
});

describe('name limits', () => {
  it('bound a CommonName in characters and in UTF-8 bytes (it is part of index keys)', () => {
    expect(schemaFor('DoorInfo').safeParse({ $type: 'DoorInfo', CommonName: 'a'.repeat(512) }).success).toBe(true);
    expect(schemaFor('DoorInfo').safeParse({ $type: 'DoorInfo', CommonName: 'a'.repeat(513) }).success).toBe(false);
    expect(schemaFor('DoorInfo').safeParse({ $type: 'DoorInfo', CommonName: '€'.repeat(400) }).success).toBe(false);
  });
});
