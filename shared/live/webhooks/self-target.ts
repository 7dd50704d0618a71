/**
 * Whether a webhook URL points at Gatehouse itself. A delivery (and a subscription's `test`) is a
 * POST its creator chooses the target of, sent from inside the service: aimed at the service's
 * own endpoints it would reach them as the service, from where they are (the local runtime: from
 * loopback, which webhooks may name there). Such a URL is refused as `InvalidUrl`, however the
 * host is spelled.
 *
 * The service's own endpoints come from the configuration: the public base URL
 * (`GATEHOUSE_PUBLIC_URL`), the WebSocket Management API, the IoT data endpoint and the two live
 * feed URLs (the local runtime sets all but the first to its own `http://localhost:<port>`).
 * A URL is the service's when its port (the scheme's default when it names none) is one of
 * theirs, and either its host is theirs as written (the URL parser has already turned `127.1`,
 * `0x7f.0.0.1`, `2130706433` and upper case into one form; a trailing dot is dropped here), or
 * both hosts reach this machine: each is resolved as the sender resolves it, and an address on
 * loopback or the unspecified address (which connects to this machine) on both sides is the
 * same machine. Public addresses are not compared: in AWS, unrelated APIs share them.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Config } from '../../config.ts';
import { addressKind } from './ssrf.ts';

/** The settings that name the service's own endpoints. */
export type OwnEndpointSettings = Pick<Config, 'publicUrl' | 'websocketManagementUrl' | 'mqttPublishUrl' | 'eventPublisherUrl' | 'mqttPublisherUrl'>;

/** The service's own endpoints, as configured. */
export function ownEndpoints(cfg: OwnEndpointSettings): string[] {
  return [cfg.publicUrl, cfg.websocketManagementUrl, cfg.mqttPublishUrl, cfg.eventPublisherUrl, cfg.mqttPublisherUrl].filter(
    (u): u is string => typeof u === 'string' && u !== '',
  );
}

const DEFAULT_PORTS: Readonly<Record<string, string>> = { 'http:': '80', 'https:': '443', 'ws:': '80', 'wss:': '443' };

interface Endpoint {
  readonly host: string;
  readonly port: string;
}

function endpointOf(raw: string): Endpoint | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  const port = url.port || DEFAULT_PORTS[url.protocol];
  if (!port) return undefined;
  let host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  while (host.endsWith('.')) host = host.slice(0, -1);
  return { host: host.toLowerCase(), port };
}

/** Whether the host reaches this machine: every address it resolves to, as the sender resolves it. */
async function reachesThisMachine(host: string): Promise<boolean> {
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true })).map((a) => a.address);
    } catch {
      // A name that does not resolve reaches nothing (the delivery fails the same way).
      return false;
    }
  }
  return addresses.some((a) => {
    const kind = addressKind(a);
    return kind === 'loopback' || kind === 'unspecified';
  });
}

/**
 * True when `raw` names one of `own` (see the module comment). A URL that does not parse is not
 * the service's (the URL rules refuse it on their own).
 */
export async function pointsAtSelf(raw: string, own: readonly string[]): Promise<boolean> {
  const target = endpointOf(raw);
  if (!target) return false;
  const same = own.map(endpointOf).filter((e): e is Endpoint => e !== undefined && e.port === target.port);
  if (same.length === 0) return false;
  if (same.some((e) => e.host === target.host)) return true;
  if (!(await reachesThisMachine(target.host))) return false;
  for (const e of same) if (await reachesThisMachine(e.host)) return true;
  return false;
}
