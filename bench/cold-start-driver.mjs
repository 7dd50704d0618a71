// A fresh Node process for one cold start, run by plain `node` (no TypeScript loader, which would
// add its own start-up time): imports a bundle, invokes its `handler` once with the event in the
// JSON file given, and prints one line `BENCH_COLD_START {...}` with the timings, then exits
// (the SDK's keep-alive sockets would otherwise hold the process open).
//
// usage: node cold-start-driver.mjs <bundle file> <event json file>
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [bundleFile, eventFile] = process.argv.slice(2);
const event = JSON.parse(readFileSync(eventFile, 'utf8'));
const context = {
  callbackWaitsForEmptyEventLoop: false,
  functionName: 'bench-cold-start',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:bench-cold-start',
  memoryLimitInMB: '512',
  awsRequestId: 'bench-cold-start',
  logGroupName: '/aws/lambda/bench-cold-start',
  logStreamName: 'bench',
  getRemainingTimeInMillis: () => 10_000,
  done: () => {},
  fail: () => {},
  succeed: () => {},
};

// performance.now() counts from the start of this process: `startedMs` is Node's own boot.
// CPU time (user + system, of this process) beside the wall time: on a shared, loaded machine the
// wall time mostly says how long the process waited for a core; the CPU time what it used.
const startedMs = performance.now();
const cpuAtStart = process.cpuUsage();
let cpuMs = Number.NaN;
let status;
let error;
let importMs = Number.NaN;
let firstRequestMs = Number.NaN;
try {
  const mod = await import(pathToFileURL(bundleFile).href);
  const imported = performance.now();
  importMs = imported - startedMs;
  const res = await mod.handler(event, context);
  firstRequestMs = performance.now() - imported;
  const cpu = process.cpuUsage(cpuAtStart);
  cpuMs = (cpu.user + cpu.system) / 1000;
  status = res && typeof res === 'object' && 'statusCode' in res ? res.statusCode : res === undefined ? 'undefined' : 'ok';
} catch (err) {
  error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
process.stdout.write(`\nBENCH_COLD_START ${JSON.stringify({ startedMs, importMs, firstRequestMs, cpuMs, status, error })}\n`);
process.exit(0);
