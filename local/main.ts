/**
 * `npm start`: the whole service on this machine, with one command. Reads `PORT` (default 3000),
 * `HOST` (default 127.0.0.1) and the `GATEHOUSE_*` settings, starts DynamoDB Local (or uses
 * `GATEHOUSE_DYNAMODB_ENDPOINT`), seeds the first instance and its administrator, and prints how
 * to call it. The last line of start-up is machine-readable for tests:
 * `GATEHOUSE_READY {"url":…,"wsUrl":…}`.
 *
 * SIGINT, SIGTERM and SIGHUP stop it cleanly (see {@link Runtime.stop}: requests in flight are
 * answered, the stream is drained, usage counts are written, Java is stopped last) and exit 0.
 * DynamoDB Local runs in a process group of its own, so the same signal sent to the whole group
 * (a terminal's Ctrl+C, a process manager's stop) does not stop it first. A second signal exits at
 * once; one within {@link REPEAT_GRACE_MS} of the first is taken for the same stop delivered twice
 * (the terminal signals the group and `npm` relays the signal to its child as well).
 */
import { config, loadConfig, type Config } from '#shared/config.ts';
import { seedDeployment, type SeedResult } from '#shared/auth/bootstrap.ts';
import { createCoreDeps } from '#shared/core-deps.ts';
import { JavaRequiredError } from './dynamo.ts';
import { PortInUseError, startRuntime, STOP_DRAIN_MS, STOP_REQUESTS_MS, type Runtime } from './server.ts';

/** The console client of the spec (`client_id`). */
const CONSOLE_CLIENT_ID = 'consoleApp';
const DEFAULT_CLIENT_SECRET = 'consoleSecret';
/** The stop's own waits (requests, stream drain) plus time for the rest and for Java. */
const STOP_TIMEOUT_MS = STOP_REQUESTS_MS + STOP_DRAIN_MS + 15_000;
const REPEAT_GRACE_MS = 1000;

const say = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};
const complain = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/** Ends the process with a one-line message; no stack trace (the `exit` hook stops Java). */
function die(message: string): never {
  complain(message);
  process.exit(1);
}

function parsePort(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 3000;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) die(`PORT must be a port number (0-65535), not "${raw}".`);
  return port;
}

/** Quotes a value for a POSIX shell. */
const sh = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

function banner(runtime: Runtime, cfg: Config, seeded: SeedResult): void {
  const firstPassword = seeded.passwordWasGenerated ? seeded.adminPassword : undefined;
  const secret = cfg.clientSecret === DEFAULT_CLIENT_SECRET ? cfg.clientSecret : '<your GATEHOUSE_CLIENT_SECRET>';
  say();
  say('Gatehouse is running (local runtime)');
  say(`  Base URL:        ${runtime.url}`);
  say(`  WebSocket URL:   ${runtime.wsUrl}`);
  say(`  MQTT URL:        ${runtime.mqttUrl}`);
  say(`  Instance:        ${cfg.rootInstance}`);
  say(`  Admin user:      ${cfg.adminUser}`);
  if (firstPassword) {
    // Deliberate, once: the generated password is shown on the first start only.
    say(`  Admin password:  ${firstPassword}   (generated now; shown only on this first start)`);
  }
  say(`  Client id:       ${CONSOLE_CLIENT_ID}`);
  say(`  Data directory:  ${runtime.dataDir}`);
  say();
  say('Try:');
  say(`  curl -s ${runtime.url}/api/sysinfo`);
  say(
    `  curl -s -X POST ${runtime.url}/token --data-urlencode grant_type=password` +
      ` --data-urlencode client_id=${CONSOLE_CLIENT_ID} --data-urlencode ${sh(`client_secret=${secret}`)}` +
      ` --data-urlencode ${sh(`instance=${cfg.rootInstance}`)} --data-urlencode ${sh(`username=${cfg.adminUser}`)}` +
      ` --data-urlencode ${sh(`password=${firstPassword ?? '<admin password>'}`)}`,
  );
  say();
  say('Stop with Ctrl+C.');
}

async function main(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const port = parsePort(process.env.PORT);
  const host = process.env.HOST || '127.0.0.1';
  let base: Config;
  try {
    base = loadConfig();
  } catch (err) {
    die((err as Error).message);
  }

  // A signal during start-up just exits: the exit hook kills DynamoDB Local.
  let runtime: Runtime | undefined;
  let stoppingSince: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (!runtime) process.exit(130);
    if (stoppingSince !== undefined) {
      if (Date.now() - stoppingSince < REPEAT_GRACE_MS) return;
      die(`${signal} again: exiting now.`);
    }
    stoppingSince = Date.now();
    say(`${signal}: stopping Gatehouse...`);
    setTimeout(() => die('Gatehouse did not stop in time; exiting.'), STOP_TIMEOUT_MS).unref();
    runtime.stop().then(
      () => {
        say('Gatehouse stopped.');
        process.exit(0);
      },
      (err: unknown) => die(`Stopping failed: ${(err as Error).message}`),
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A closed terminal: Java, in its own group, does not get the hangup; stop it with the rest.
  process.on('SIGHUP', onSignal);

  say('Starting Gatehouse...');
  try {
    runtime = await startRuntime({
      port,
      host,
      dataDir: base.dataDir,
      dynamodbEndpoint: base.dynamodbEndpoint,
      // The handlers above stop the runtime, Java last.
      dynamoOwnProcessGroup: true,
      // An explicit setting wins (a proxy in front); otherwise the runtime's own address.
      eventPublisherUrl: process.env.GATEHOUSE_EVENT_PUBLISHER_URL || undefined,
      mqttPublisherUrl: process.env.GATEHOUSE_MQTT_PUBLISHER_URL || undefined,
      throttle: { rateLimit: base.throttleRate, burstLimit: base.throttleBurst },
      // Served only once the administrator below can log in.
      gated: true,
    });
  } catch (err) {
    if (err instanceof PortInUseError || err instanceof JavaRequiredError) die(err.message);
    die(`Gatehouse could not start: ${(err as Error).message}`);
  }

  const cfg = config();
  let seeded: SeedResult;
  try {
    seeded = await seedDeployment(createCoreDeps(), {
      instanceName: cfg.rootInstance,
      adminUser: cfg.adminUser,
      ...(cfg.adminPassword !== undefined ? { adminPassword: cfg.adminPassword } : {}),
      clientSecret: cfg.clientSecret,
      dataDir: cfg.dataDir,
    });
  } catch (err) {
    complain(`Seeding the first instance failed: ${(err as Error).message}`);
    await runtime.stop();
    process.exit(1);
  }

  runtime.open();
  banner(runtime, cfg, seeded);
  say(
    `GATEHOUSE_READY ${JSON.stringify({
      url: runtime.url,
      wsUrl: runtime.wsUrl,
      mqttUrl: runtime.mqttUrl,
      port: runtime.port,
      dataDir: runtime.dataDir,
      dynamodbEndpoint: runtime.dynamodbEndpoint,
      javaPid: runtime.javaPid ?? null,
      pid: process.pid,
      instanceKey: seeded.instanceKey,
      // After a crash, `checkpoint`: the stream is read on from where the last run left it.
      streamStart: runtime.streamPollerStats().start,
    })}`,
  );
}

main().catch((err: unknown) => die(`Gatehouse failed: ${(err as Error).message}`));
