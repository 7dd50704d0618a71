/**
 * The PIN as a credential download carries it: SHA-256 of the controller's `PinSalt` and the PIN,
 * hex. A controller hashes the PIN a person enters the same way and compares. The download thus
 * never holds a PIN in clear; a 4 to 8 digit PIN stays guessable from its hash by whoever holds
 * the download, which is why the download needs an Administrator or a Controller user.
 */
import { createHash } from 'node:crypto';

/** The salted hash of a PIN (digits). */
export function pinHash(salt: string, pin: string): string {
  return createHash('sha256').update(`${salt}:${pin}`).digest('hex');
}

/** A controller's salt: fixed per controller, so a download's hashes change only with the PINs. */
export function pinSaltOf(controllerKey: string): string {
  return createHash('sha256').update(`gatehouse-pin-salt:${controllerKey}`).digest('hex').slice(0, 32);
}
