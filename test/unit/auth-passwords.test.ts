import { describe, expect, it } from 'vitest';
import {
  generatePassword,
  hashPassword,
  parseHash,
  passwordRuleViolation,
  verifyAgainstDummy,
  verifyPassword,
} from '#shared/auth/passwords.ts';

describe('password rules', () => {
  it.each([
    ['Abcdef1!', undefined, undefined],
    ['Abcde1!', undefined, 'password_doesnot_meet_minimum_length_rule'],
    ['', undefined, 'password_doesnot_meet_minimum_length_rule'],
    ['abcdefg1!', undefined, 'password_doesnot_meet_complexity_rule'],
    ['ABCDEFG1!', undefined, 'password_doesnot_meet_complexity_rule'],
    ['Abcdefgh!', undefined, 'password_doesnot_meet_complexity_rule'],
    ['Abcdefgh1', undefined, 'password_doesnot_meet_complexity_rule'],
    ['Abcdef1!', 12, 'password_doesnot_meet_minimum_length_rule'],
    ['Abcdef1!xyz#', 12, undefined],
    ['Ab1!x', 5, undefined],
    ['Äbcdéf1 ', undefined, undefined],
  ] as const)('judges %j (minimum %s) as %s', (password, minimum, expected) => {
    expect(passwordRuleViolation(password, minimum)).toBe(expected);
  });

  it('checks the length before the complexity', () => {
    expect(passwordRuleViolation('abc')).toBe('password_doesnot_meet_minimum_length_rule');
  });

  it('counts characters, not UTF-16 units', () => {
    // Four emoji are 8 UTF-16 units but 4 characters.
    expect(passwordRuleViolation('A1a😀😀😀😀')).toBe('password_doesnot_meet_minimum_length_rule');
  });

  it('generates passwords that meet the rules and differ', () => {
    const a = generatePassword();
    const b = generatePassword();
    expect(passwordRuleViolation(a)).toBeUndefined();
    expect(a).toHaveLength(20);
    expect(a).not.toBe(b);
  });
});

// Each scrypt (N=2^17) takes about 0.4 s of one core; on a busy two-core machine four of them
// outlast vitest's default 5 s.
describe('password hashes', { timeout: 30_000 }, () => {
  it('hashes with scrypt N=2^17, r=8, p=1 and a random salt, and verifies', async () => {
    const [h1, h2] = await Promise.all([hashPassword('Correct horse 1!'), hashPassword('Correct horse 1!')]);
    expect(h1).toMatch(/^\$scrypt\$ln=17,r=8,p=1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(h1).not.toBe(h2);
    expect(parseHash(h1)?.salt).toHaveLength(16);
    expect(h1).not.toContain('Correct');
    expect(await verifyPassword('Correct horse 1!', h1)).toBe(true);
    expect(await verifyPassword('Correct horse 1?', h1)).toBe(false);
  });

  it('hashes at a lower cost when asked (test runs), and verifies each hash at the cost it names', async () => {
    const low = await hashPassword('Correct horse 1!', 12);
    expect(low).toMatch(/^\$scrypt\$ln=12,r=8,p=1\$/);
    expect(parseHash(low)?.logN).toBe(12);
    expect(await verifyPassword('Correct horse 1!', low)).toBe(true);
    expect(await verifyPassword('Correct horse 2!', low)).toBe(false);
  });

  it('treats a malformed hash as a mismatch', async () => {
    expect(await verifyPassword('x', 'not-a-hash')).toBe(false);
    expect(parseHash('$scrypt$ln=40,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=')).toBeUndefined();
  });

  it('spends the same scrypt work on the dummy hash', async () => {
    const real = await hashPassword('Whatever1!');
    await verifyAgainstDummy('warm-up');
    const t0 = performance.now();
    await verifyPassword('Wrong1!', real);
    const tReal = performance.now() - t0;
    const t1 = performance.now();
    expect(await verifyAgainstDummy('Wrong1!')).toBe(false);
    const tDummy = performance.now() - t1;
    expect(tDummy / tReal).toBeGreaterThan(0.5);
    expect(tDummy / tReal).toBeLessThan(2);
  });
});
