/**
 * The options of an SDK client for an endpoint the fan-out posts to (the WebSocket Management API,
 * the IoT data plane): in AWS the endpoint's URL and the function's own credentials; on the local
 * runtime, whose loopback endpoints check no signature, fixed credentials that never leave the
 * machine (there may be none configured).
 */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export function endpointClientOptions(opts: { endpoint: string; region: string }): {
  region: string;
  endpoint: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
} {
  const local = LOOPBACK.has(new URL(opts.endpoint).hostname);
  return { region: opts.region, endpoint: opts.endpoint, ...(local ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}) };
}
