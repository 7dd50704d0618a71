/**
 * The one module that reads `process.env`. Everything else receives a typed {@link Config}.
 * Values are validated once; a bad value fails fast with the variable's name.
 */
// Hand-written readers, not a schema library: zod/mini had to load its own module, build a schema
// per setting and run the first parse on every cold start of every function, for what a few
// plain functions decide as well. They decide exactly as the zod/mini schemas did (same accepted
// values, same output, same messages): `Number()` coercion, safe integers, `URL.canParse` on the
// trimmed value.

/** Reads one variable's text: its value, or calls `bad` with what is wrong (perhaps several times). */
type Reader<T> = (raw: string, bad: (message: string) => void) => T;
/** A setting: reads a variable that may be unset. */
type Setting<T> = (raw: string | undefined, bad: (message: string) => void) => T;

const bool: Reader<boolean> = (raw, bad) => {
  if (!['true', 'false', '1', '0', 'yes', 'no'].includes(raw)) bad('expected true, false, 1, 0, yes or no');
  return raw === 'true' || raw === '1' || raw === 'yes';
};

/** A finite number, as `Number()` reads the text (`''` is 0); undefined after `bad`. */
const finite = (raw: string, bad: (message: string) => void, expected: string): number | undefined => {
  const n = Number(raw);
  if (Number.isFinite(n)) return n;
  bad(expected);
  return undefined;
};

const int =
  (min: number, max: number): Reader<number> =>
  (raw, bad) => {
    const expected = `expected an integer from ${min} to ${max}`;
    const n = finite(raw, bad, expected);
    if (n === undefined) return 0;
    if (!Number.isInteger(n)) {
      bad(expected);
      return n;
    }
    // As zod: an unsafe integer is one problem, and the bounds are still checked.
    if (!Number.isSafeInteger(n)) bad(expected);
    if (n < min) bad(expected);
    if (n > max) bad(expected);
    return n;
  };
const str = (): Reader<string> => (raw) => raw;
const minLength =
  (min: number, message: string): Reader<string> =>
  (raw, bad) => {
    if (raw.length < min) bad(message);
    return raw;
  };
const pattern =
  (re: RegExp, message: string): Reader<string> =>
  (raw, bad) => {
    if (!re.test(raw)) bad(message);
    return raw;
  };
/** A URL: the trimmed text must parse; tabs and newlines in it are dropped (what the URL parser ignores). */
const url = (): Reader<string> => (raw, bad) => {
  const trimmed = raw.trim();
  if (!URL.canParse(trimmed)) bad('expected a URL');
  return trimmed.replace(/[\t\n\r]/g, '');
};
const oneOf =
  <const T extends string>(values: readonly T[], message: string): Reader<T> =>
  (raw, bad) => {
    if (!(values as readonly string[]).includes(raw)) bad(message);
    return raw as T;
  };
const nonEmpty = () => minLength(1, 'expected a non-empty string');
const opt =
  <T>(read: Reader<T>): Setting<T | undefined> =>
  (raw, bad) =>
    raw === undefined ? undefined : read(raw, bad);
const def =
  <T>(read: Reader<T>, value: T): Setting<T> =>
  (raw, bad) =>
    raw === undefined ? value : read(raw, bad);

const retryScale: Reader<number> = (raw, bad) => {
  const expected = 'expected a number above 0, at most 1';
  const n = finite(raw, bad, expected);
  if (n === undefined) return 1;
  if (!(n > 0)) bad(expected);
  if (!(n <= 1)) bad(expected);
  return n;
};

/** Every setting, with its environment variable and default. docs/configuration.md's table lists the same. */
const SETTINGS = {
  GATEHOUSE_TABLE_NAME: def(minLength(3, 'expected at least 3 characters'), 'gatehouse'),
  GATEHOUSE_DYNAMODB_ENDPOINT: opt(url()),
  GATEHOUSE_REGION: def(str(), 'us-east-1'),
  GATEHOUSE_MODEL_NAMESPACE: def(pattern(/^[A-Za-z_][A-Za-z0-9_.]*$/, 'a dotted identifier'), 'Gatehouse.Model'),
  GATEHOUSE_BUILD_NUMBER: def(int(0, 2 ** 31), 0),
  GATEHOUSE_EVENT_PUBLISHER_URL: def(str(), 'ws://localhost:3000/events'),
  GATEHOUSE_FIT_SCRIPT_ENGINE_URL: def(str(), ''),
  GATEHOUSE_LICENSE_SERVER_URL: def(str(), ''),
  GATEHOUSE_UAP_BROKER_URL: def(str(), ''),
  GATEHOUSE_PRINTER_CONNECT_API_URL: def(str(), ''),
  GATEHOUSE_AAC_CLIENT_URL: opt(str()),
  GATEHOUSE_GALLERY_ENABLED: def(bool, false),
  GATEHOUSE_RELEASE_NOTES_URL: def(str(), 'https://github.com/gatehouse-project/gatehouse/blob/main/CHANGELOG.md'),
  GATEHOUSE_LOG_LEVEL: def(oneOf(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT'], 'expected DEBUG, INFO, WARN, ERROR or SILENT'), 'INFO'),
  GATEHOUSE_DATA_DIR: def(str(), '.data'),
  GATEHOUSE_INSTANCE: def(nonEmpty(), 'Gatehouse'),
  GATEHOUSE_ADMIN_USER: def(nonEmpty(), 'admin'),
  GATEHOUSE_ADMIN_PASSWORD: opt(str()),
  GATEHOUSE_CLIENT_SECRET: def(nonEmpty(), 'consoleSecret'),
  GATEHOUSE_CLIENTS: def(str(), ''),
  GATEHOUSE_ACCESS_TOKEN_TTL: def(int(60, 7 * 86400), 86399),
  GATEHOUSE_REFRESH_TOKEN_DAYS: def(int(1, 365), 30),
  GATEHOUSE_LOCKOUT_THRESHOLD: def(int(1, 1000), 5),
  GATEHOUSE_LOCKOUT_MINUTES: def(int(1, 24 * 60), 15),
  // Password grants per minute (and at once) from one client address and for one login name,
  // per execution environment, checked before the hash (shared/auth/login-throttle.ts); 0: off.
  GATEHOUSE_LOGIN_ADDRESS_RATE: def(int(0, 1_000_000), 30),
  GATEHOUSE_LOGIN_ADDRESS_BURST: def(int(0, 1_000_000), 20),
  GATEHOUSE_LOGIN_NAME_RATE: def(int(0, 1_000_000), 6),
  GATEHOUSE_LOGIN_NAME_BURST: def(int(0, 1_000_000), 10),
  // Tenant rate limits: requests a second per instance and per user, per execution environment,
  // a burst of twice that (shared/http/rate-limit.ts); 0: no limit (the local default).
  GATEHOUSE_RATE_LIMIT_PER_INSTANCE: def(int(0, 1_000_000), 0),
  GATEHOUSE_RATE_LIMIT_PER_USER: def(int(0, 1_000_000), 0),
  GATEHOUSE_ISSUER: def(str(), 'gatehouse'),
  GATEHOUSE_AUDIENCE: def(str(), 'gatehouse-api'),
  GATEHOUSE_SIGNING_KEY_SECRET: opt(str()),
  GATEHOUSE_PUBLIC_KEYS: def(oneOf(['file', 'table'], 'expected file or table'), 'file'),
  GATEHOUSE_LICENSE_AUTHORITY_KEY: opt(str()),
  GATEHOUSE_NOTIFY_TOPIC_ARN: opt(str()),
  GATEHOUSE_EVENT_RETENTION_DAYS: def(int(1, 36500), 365),
  GATEHOUSE_AGGREGATE_MAX_EVENTS: def(int(1, 10_000_000), 100_000),
  GATEHOUSE_WEBSOCKET_MANAGEMENT_URL: opt(str()),
  GATEHOUSE_MQTT_PUBLISHER_URL: def(str(), 'ws://localhost:3000/mqtt'),
  GATEHOUSE_MQTT_PUBLISH_URL: opt(url()),
  // The API's public base URL (the OpenAPI document's `servers`; a webhook may not name it).
  GATEHOUSE_PUBLIC_URL: opt(url()),
  GATEHOUSE_CORS_ORIGINS: def(str(), ''),
  GATEHOUSE_MAX_BODY_BYTES: def(int(1024, 10 * 1024 * 1024), 1_048_576),
  // The local runtime's stage throttling, as the HTTP API's in AWS (infra/http-api.ts).
  GATEHOUSE_THROTTLE_RATE: def(int(0, 1_000_000), 100),
  GATEHOUSE_THROTTLE_BURST: def(int(0, 1_000_000), 200),
  // Webhooks: the SQS queue of deliveries in AWS (unset: the table-backed queue of the local runtime).
  GATEHOUSE_WEBHOOK_QUEUE_URL: opt(url()),
  // The local runtime sets true; AWS false (private targets are always refused there).
  GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: def(bool, false),
  // Single sign-on: an identity provider's Issuer may be http on a loopback address (the local
  // runtime sets true, as for webhooks; AWS false: https only).
  GATEHOUSE_IDP_ALLOW_LOOPBACK: def(bool, false),
  // Single sign-on: public OAuth clients (PKCE) besides gatehouseConsole, as JSON
  // `[{"clientId","redirectUris":[...]}]` (shared/auth/sso/clients.ts).
  GATEHOUSE_OAUTH_CLIENTS: def(str(), ''),
  // Webhook secrets at rest: the Secrets Manager secret holding their key in AWS (unset: the data
  // directory's key file, shared/auth/secret-box.ts).
  GATEHOUSE_WEBHOOK_SECRET_KEY_SECRET: opt(str()),
  // Test-only: multiplies the retry delays and the five-day disable window (1 = the real schedule).
  GATEHOUSE_WEBHOOK_RETRY_SCALE: def(retryScale, 1),
  // Tenant usage: how often an execution environment writes its counts (0: after every request).
  GATEHOUSE_USAGE_FLUSH_SECONDS: def(int(0, 3600), 60),
  // CloudWatch metrics (EMF lines on stdout): unset means on in Lambda, off anywhere else.
  GATEHOUSE_METRICS: opt(bool),
  // Set by the Lambda runtime (and never by the local runtime); the second only for an environment
  // given several invocations at once.
  AWS_LAMBDA_FUNCTION_NAME: opt(str()),
  AWS_LAMBDA_MAX_CONCURRENCY: opt(str()),
  // Signing keys: how long an execution environment reuses the keys it read, and how often the
  // scheduled key manager rolls the signing key over (0: only on demand). See shared/auth/key-ring.ts.
  GATEHOUSE_KEY_CACHE_SECONDS: def(int(1, 3600), 300),
  GATEHOUSE_SIGNING_KEY_ROTATION_DAYS: def(int(0, 3650), 30),
  // Test-only below 17: log2 of scrypt's N for new password hashes (stored hashes keep their own).
  GATEHOUSE_PASSWORD_HASH_COST: def(int(10, 20), 17),
} satisfies Record<string, Setting<unknown>>;

type Settings = { -readonly [K in keyof typeof SETTINGS]: ReturnType<(typeof SETTINGS)[K]> };

/** Every setting read from `env`, or one error naming every bad variable. */
function readSettings(env: Record<string, string | undefined>): Settings {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, read] of Object.entries(SETTINGS) as Array<[string, Setting<unknown>]>) {
    out[name] = read(env[name], (message) => problems.push(`${name}: ${message}`));
  }
  if (problems.length) throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  return out as Settings;
}

export type Config = Readonly<{
  tableName: string;
  dynamodbEndpoint: string | undefined;
  region: string;
  modelNamespace: string;
  version: string;
  buildNumber: number;
  eventPublisherUrl: string;
  fitScriptEngineUrl: string;
  licenseServerUrl: string;
  uapBrokerUrl: string;
  printerConnectApiUrl: string;
  aacClientUrl: string | null;
  galleryEnabled: boolean;
  releaseNotesUrl: string;
  logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT';
  dataDir: string;
  rootInstance: string;
  adminUser: string;
  adminPassword: string | undefined;
  clientSecret: string;
  /** Extra confidential clients, `id:secret` pairs separated by commas. */
  clients: ReadonlyMap<string, string>;
  accessTokenTtl: number;
  refreshTokenDays: number;
  lockoutThreshold: number;
  lockoutMinutes: number;
  /** Password grants a minute from one client address (per environment); 0: not throttled by address. */
  loginAddressRate: number;
  /** Password grants at once from one client address (the bucket's size); 0: not throttled by address. */
  loginAddressBurst: number;
  /** Password grants a minute for one login name (per environment); 0: not throttled by name. */
  loginNameRate: number;
  /** Password grants at once for one login name; 0: not throttled by name. */
  loginNameBurst: number;
  /** Requests a second one instance's callers may make (per environment, a burst of twice that); 0: no limit. */
  rateLimitPerInstance: number;
  /** Requests a second one user may make (per environment, a burst of twice that); 0: no limit. */
  rateLimitPerUser: number;
  issuer: string;
  audience: string;
  signingKeySecret: string | undefined;
  /** Where verifiers read the public JWKS: the data directory's ring, or the table item the key manager writes (AWS). */
  publicKeys: 'file' | 'table';
  licenseAuthorityKey: string | undefined;
  notifyTopicArn: string | undefined;
  eventRetentionDays: number;
  /** Events one aggregation may read; more answers 400 QueryTooBroad. */
  aggregateMaxEvents: number;
  websocketManagementUrl: string | undefined;
  /** Where MQTT clients connect (sysinfo's `MqttPublisherUrl`). */
  mqttPublisherUrl: string;
  /** The IoT data plane endpoint the fan-out publishes to; unset turns the MQTT channel off. */
  mqttPublishUrl: string | undefined;
  /**
   * The API's public base URL (e.g. `https://api.example.com`): the `servers` of the OpenAPI
   * document, and a URL webhooks may not name. Unset: the document names the host each request
   * called (and is not kept by shared caches).
   */
  publicUrl: string | undefined;
  corsOrigins: readonly string[];
  maxBodyBytes: number;
  /** Local runtime: requests per second let through on average; 0 turns throttling off. */
  throttleRate: number;
  /** Local runtime: requests let through at once (the token bucket's size); 0 turns throttling off. */
  throttleBurst: number;
  /** The SQS queue of webhook deliveries; unset: the local runtime's table-backed queue. */
  webhookQueueUrl: string | undefined;
  /** Webhook URLs may name loopback addresses, over http too (the local runtime only). */
  webhookAllowLoopback: boolean;
  /** Identity providers' Issuer may be `http` on a loopback address (the local runtime only). */
  idpAllowLoopback: boolean;
  /**
   * The public OAuth clients of the authorization code flow besides `gatehouseConsole`, each with
   * its registered redirect URIs (GATEHOUSE_OAUTH_CLIENTS).
   */
  oauthClients: ReadonlyArray<{ readonly clientId: string; readonly redirectUris: readonly string[] }>;
  /** The Secrets Manager secret whose value keys the webhook secrets at rest; unset: `<dataDir>/keys/webhook-secret.key`. */
  webhookSecretKeySecret: string | undefined;
  /** Test-only factor on the webhook retry delays and the five-day disable window. */
  webhookRetryScale: number;
  /** Seconds between two writes of an execution environment's usage counts; 0 writes after every request. */
  usageFlushSeconds: number;
  /** Emit CloudWatch metrics (EMF) per request: on in Lambda unless GATEHOUSE_METRICS says otherwise. */
  metrics: boolean;
  /**
   * A Lambda environment that serves one invocation at a time (the default; not with
   * `AWS_LAMBDA_MAX_CONCURRENCY` above 1): requests cannot overlap in this process.
   */
  invocationsOneAtATime: boolean;
  /** Seconds an execution environment reuses the signing ring and the JWKS it read. */
  keyCacheSeconds: number;
  /** Days a signing key signs before the scheduled rollover; 0: only `rotate-signing-key`. */
  signingKeyRotationDays: number;
  /** log2 of scrypt's N for new password hashes: 17 (OWASP) unless a test run lowers it. */
  passwordHashCost: number;
}>;

/** GATEHOUSE_OAUTH_CLIENTS: `[{ "clientId": "...", "redirectUris": ["https://..."] }]`; empty: none. */
function parseOAuthClients(text: string): Config['oauthClients'] {
  if (text.trim() === '') return [];
  const bad = (why: string): never => {
    throw new Error(`Invalid configuration: GATEHOUSE_OAUTH_CLIENTS: ${why}`);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return bad('expected JSON');
  }
  if (!Array.isArray(parsed)) return bad('expected a JSON array');
  return parsed.map((c: unknown) => {
    const o = (c ?? {}) as { clientId?: unknown; redirectUris?: unknown };
    if (typeof o.clientId !== 'string' || o.clientId === '') return bad('every client needs a clientId');
    const uris = o.redirectUris;
    if (!Array.isArray(uris) || uris.length === 0) return bad(`${o.clientId}: expected redirectUris, a non-empty array`);
    for (const u of uris) if (typeof u !== 'string' || !URL.canParse(u) || u.includes('#')) bad(`${o.clientId}: a redirect URI must be an absolute URL without a fragment`);
    return Object.freeze({ clientId: o.clientId, redirectUris: Object.freeze([...(uris as string[])]) });
  });
}

/** The package version, injected by esbuild at bundle time and read from package.json otherwise. */
declare const __GATEHOUSE_VERSION__: string | undefined;
const packageVersion = typeof __GATEHOUSE_VERSION__ === 'string' ? __GATEHOUSE_VERSION__ : '0.1.0';

/** Reads and validates the environment. Throws one error naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const e = readSettings(env);
  const clients = new Map<string, string>();
  for (const pair of e.GATEHOUSE_CLIENTS.split(',').map((s) => s.trim()).filter(Boolean)) {
    const at = pair.indexOf(':');
    if (at <= 0) throw new Error('Invalid configuration: GATEHOUSE_CLIENTS: expected id:secret pairs');
    clients.set(pair.slice(0, at), pair.slice(at + 1));
  }
  return Object.freeze({
    tableName: e.GATEHOUSE_TABLE_NAME,
    dynamodbEndpoint: e.GATEHOUSE_DYNAMODB_ENDPOINT,
    region: e.GATEHOUSE_REGION,
    modelNamespace: e.GATEHOUSE_MODEL_NAMESPACE,
    version: `${packageVersion}.${e.GATEHOUSE_BUILD_NUMBER}`,
    buildNumber: e.GATEHOUSE_BUILD_NUMBER,
    eventPublisherUrl: e.GATEHOUSE_EVENT_PUBLISHER_URL,
    fitScriptEngineUrl: e.GATEHOUSE_FIT_SCRIPT_ENGINE_URL,
    licenseServerUrl: e.GATEHOUSE_LICENSE_SERVER_URL,
    uapBrokerUrl: e.GATEHOUSE_UAP_BROKER_URL,
    printerConnectApiUrl: e.GATEHOUSE_PRINTER_CONNECT_API_URL,
    aacClientUrl: e.GATEHOUSE_AAC_CLIENT_URL ?? null,
    galleryEnabled: e.GATEHOUSE_GALLERY_ENABLED,
    releaseNotesUrl: e.GATEHOUSE_RELEASE_NOTES_URL,
    logLevel: e.GATEHOUSE_LOG_LEVEL,
    dataDir: e.GATEHOUSE_DATA_DIR,
    rootInstance: e.GATEHOUSE_INSTANCE,
    adminUser: e.GATEHOUSE_ADMIN_USER,
    adminPassword: e.GATEHOUSE_ADMIN_PASSWORD,
    clientSecret: e.GATEHOUSE_CLIENT_SECRET,
    clients,
    accessTokenTtl: e.GATEHOUSE_ACCESS_TOKEN_TTL,
    refreshTokenDays: e.GATEHOUSE_REFRESH_TOKEN_DAYS,
    lockoutThreshold: e.GATEHOUSE_LOCKOUT_THRESHOLD,
    lockoutMinutes: e.GATEHOUSE_LOCKOUT_MINUTES,
    loginAddressRate: e.GATEHOUSE_LOGIN_ADDRESS_RATE,
    loginAddressBurst: e.GATEHOUSE_LOGIN_ADDRESS_BURST,
    loginNameRate: e.GATEHOUSE_LOGIN_NAME_RATE,
    loginNameBurst: e.GATEHOUSE_LOGIN_NAME_BURST,
    rateLimitPerInstance: e.GATEHOUSE_RATE_LIMIT_PER_INSTANCE,
    rateLimitPerUser: e.GATEHOUSE_RATE_LIMIT_PER_USER,
    issuer: e.GATEHOUSE_ISSUER,
    audience: e.GATEHOUSE_AUDIENCE,
    signingKeySecret: e.GATEHOUSE_SIGNING_KEY_SECRET,
    publicKeys: e.GATEHOUSE_PUBLIC_KEYS,
    licenseAuthorityKey: e.GATEHOUSE_LICENSE_AUTHORITY_KEY,
    notifyTopicArn: e.GATEHOUSE_NOTIFY_TOPIC_ARN,
    eventRetentionDays: e.GATEHOUSE_EVENT_RETENTION_DAYS,
    aggregateMaxEvents: e.GATEHOUSE_AGGREGATE_MAX_EVENTS,
    websocketManagementUrl: e.GATEHOUSE_WEBSOCKET_MANAGEMENT_URL,
    mqttPublisherUrl: e.GATEHOUSE_MQTT_PUBLISHER_URL,
    mqttPublishUrl: e.GATEHOUSE_MQTT_PUBLISH_URL,
    publicUrl: e.GATEHOUSE_PUBLIC_URL,
    corsOrigins: e.GATEHOUSE_CORS_ORIGINS.split(',').map((s) => s.trim()).filter(Boolean),
    maxBodyBytes: e.GATEHOUSE_MAX_BODY_BYTES,
    throttleRate: e.GATEHOUSE_THROTTLE_RATE,
    throttleBurst: e.GATEHOUSE_THROTTLE_BURST,
    webhookQueueUrl: e.GATEHOUSE_WEBHOOK_QUEUE_URL,
    webhookAllowLoopback: e.GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK,
    idpAllowLoopback: e.GATEHOUSE_IDP_ALLOW_LOOPBACK,
    oauthClients: parseOAuthClients(e.GATEHOUSE_OAUTH_CLIENTS),
    webhookRetryScale: e.GATEHOUSE_WEBHOOK_RETRY_SCALE,
    webhookSecretKeySecret: e.GATEHOUSE_WEBHOOK_SECRET_KEY_SECRET,
    usageFlushSeconds: e.GATEHOUSE_USAGE_FLUSH_SECONDS,
    metrics: e.GATEHOUSE_METRICS ?? e.AWS_LAMBDA_FUNCTION_NAME !== undefined,
    invocationsOneAtATime: e.AWS_LAMBDA_FUNCTION_NAME !== undefined && Number(e.AWS_LAMBDA_MAX_CONCURRENCY ?? '1') <= 1,
    keyCacheSeconds: e.GATEHOUSE_KEY_CACHE_SECONDS,
    signingKeyRotationDays: e.GATEHOUSE_SIGNING_KEY_ROTATION_DAYS,
    passwordHashCost: e.GATEHOUSE_PASSWORD_HASH_COST,
  });
}

let cached: Config | undefined;

/** The configuration of this execution environment, read once. */
export function config(): Config {
  cached ??= loadConfig();
  return cached;
}

/**
 * Reads the environment again and makes it this process's configuration: for a process that
 * derives settings before its first handler runs (the local runtime and `npm run admin` set the
 * data directory, DynamoDB Local's endpoint and their own URLs), and for a test that changes the
 * environment.
 */
export function reloadConfig(): Config {
  cached = loadConfig();
  return cached;
}
