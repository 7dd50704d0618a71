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
  private readonly compiled: Compiled[];
  private readonly fallback: Route | undefined;

  constructor(routes: readonly Route[] = ROUTES) {
    this.compiled = routes.filter((r) => r.path !== '$default').map(compile);
    this.fallback = routes.find((r) => r.path === '$default');
  }

  /** The route for a method and a raw path (no query string), or the `$default` route. */
  match(method: string, rawPath: string): RouteMatch | undefined {
    const parts = rawPath.split('/').filter(Boolean);
    const m = method.toUpperCase();
    let best: { c: Compiled; params: Record<string, string> } | undefined;
    for (const c of this.compiled) {
      if (c.route.method !== m && c.route.method !== 'ANY') continue;
      if (c.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < parts.length; i++) {
        const seg = c.segments[i]!;
        if ('literal' in seg) {
          if (seg.literal !== parts[i]) {
            ok = false;
            break;
          }
        } else {
          params[seg.param] = safeDecode(parts[i]!);
        }
      }
      if (ok && (!best || specificity(c, best.c) < 0)) best = { c, params };
    }
    if (best) return { route: best.c.route, params: best.params };
    return this.fallback ? { route: this.fallback, params: {} } : undefined;
  }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
