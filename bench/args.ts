/**
 * The benchmark's command line. Pure; unit-tested.
 */
import { RESULT_KEYS, type Results } from './results.ts';

export type Mode = 'quick' | 'full';

const USAGE = `usage: npm run bench [-- --quick] [-- --only <key>,<key>...]
  --quick   fewer people, samples and events: under a minute
  --only    measure only these entries (the others are written as not measured): ${RESULT_KEYS.join(', ')}
`;

/** The command line: \`--quick\`, \`--only a,b\`; or the usage text with an exit code. */
export function parseArgs(argv: readonly string[]): { mode: Mode; only?: ReadonlySet<keyof Results> } | { usage: string; exitCode: number } {
  let mode: Mode = 'full';
  let only: Set<keyof Results> | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--help' || a === '-h') return { usage: USAGE, exitCode: 0 };
    if (a === '--quick') mode = 'quick';
    else if (a === '--only' || a.startsWith('--only=')) {
      const list = a === '--only' ? argv[++i] : a.slice('--only='.length);
      const keys = (list ?? '').split(',').map((k) => k.trim()).filter(Boolean);
      const bad = keys.filter((k) => !(RESULT_KEYS as readonly string[]).includes(k));
      if (!keys.length || bad.length) return { usage: `unknown entry: ${bad.join(', ') || '(none)'}\n${USAGE}`, exitCode: 2 };
      only = new Set(keys as Array<keyof Results>);
    } else return { usage: `unknown argument: ${a}\n${USAGE}`, exitCode: 2 };
  }
  return only ? { mode, only } : { mode };
}

