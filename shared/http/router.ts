/**
 * Matches a request against the route table the way API Gateway HTTP APIs do: the route with
 * the most specific path wins (a literal segment beats a `{param}` at the first position where
 * they differ), a method-specific route beats `ANY`, and `$default` catches the rest.
 */
import { ROUTES, type Route } from '../routes.ts';

export interface RouteMatch {
  readonly route: Route;
  readonly params: Readonly<Record<string, string>>;
}

type Segment = { literal: string } | { param: string };

interface Compiled {
  readonly route: Route;
  readonly segments: readonly Segment[];
}

function compile(route: Route): Compiled {
  const segments = route.path
    .split('/')
    .filter(Boolean)
    .map((s): Segment => (s.startsWith('{') && s.endsWith('}') ? { param: s.slice(1, -1) } : { literal: s }));
  return { route, segments };
}

/** Compares two candidate routes: negative when `a` is more specific. */
function specificity(a: Compiled, b: Compiled): number {
  const n = Math.min(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const al = 'literal' in a.segments[i]!;
    const bl = 'literal' in b.segments[i]!;
    if (al !== bl) return al ? -1 : 1;
  }
  if (a.route.method !== b.route.method) return a.route.method === 'ANY' ? 1 : -1;
  return 0;
}

export class Router {
  /**
   * The candidates of each method and segment count, in table order (a method's own routes and
   * the `ANY` ones): a request is compared with a handful of routes, not the whole table.
   */
  private readonly buckets = new Map<string, readonly Compiled[]>();
  private readonly fallback: Route | undefined;

  constructor(routes: readonly Route[] = ROUTES) {
    const compiled = routes.filter((r) => r.path !== '$default').map(compile);
    this.fallback = routes.find((r) => r.path === '$default');
    const methods = new Set(compiled.map((c) => c.route.method));
    methods.add('ANY');
    for (const m of methods) {
      for (const length of new Set(compiled.map((c) => c.segments.length))) {
        const list = compiled.filter((c) => c.segments.length === length && (c.route.method === m || c.route.method === 'ANY'));
        if (list.length) this.buckets.set(bucketKey(m, length), list);
      }
    }
  }

  /** The route for a method and a raw path (no query string), or the `$default` route. */
  match(method: string, rawPath: string): RouteMatch | undefined {
    const parts = rawPath.split('/').filter(Boolean);
    const m = method.toUpperCase();
    // A method no route names can still match an `ANY` route.
    const candidates = this.buckets.get(bucketKey(m, parts.length)) ?? this.buckets.get(bucketKey('ANY', parts.length)) ?? [];
    let best: Compiled | undefined;
    for (const c of candidates) {
      if (c.segments.every((seg, i) => !('literal' in seg) || seg.literal === parts[i]) && (!best || specificity(c, best) < 0)) best = c;
    }
    if (best) {
      // Parameters are decoded for the chosen route only.
      const params: Record<string, string> = {};
      best.segments.forEach((seg, i) => {
        if ('param' in seg) params[seg.param] = safeDecode(parts[i]!);
      });
      return { route: best.route, params };
    }
    return this.fallback ? { route: this.fallback, params: {} } : undefined;
  }
}

const bucketKey = (method: string, segments: number): string => `${method} ${segments}`;

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Matches already made for an event, with the method and path they were made for. */
const matched = new WeakMap<object, { readonly method: string; readonly path: string; readonly match: RouteMatch }>();

/**
 * Records the match a router made for `event` (the local runtime routes each request before it
 * invokes a family, as API Gateway does), so the family's pipeline need not match it again.
 */
export function rememberMatch(event: object, method: string, path: string, match: RouteMatch): void {
  matched.set(event, { method: method.toUpperCase(), path, match });
}

/** The match recorded for `event`, when it was made for this method and path (else undefined: match it). */
export function matchOf(event: object, method: string, path: string): RouteMatch | undefined {
  const m = matched.get(event);
  return m && m.path === path && m.method === method.toUpperCase() ? m.match : undefined;
}
