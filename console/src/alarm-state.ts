/**
 * The number of unacknowledged alarms the navigation shows, kept current by the alarms work (it
 * counts on load and follows live events). Null while unknown.
 */
import { signal } from '@preact/signals';

export const unacknowledgedAlarms = signal<number | null>(null);
