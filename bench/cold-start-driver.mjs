// A fresh Node process for one cold start, run by plain `node` (no TypeScript loader, which would
// add its own start-up time): imports a bundle, invokes its `handler` once with the event in the
// JSON file given, and prints one line `BENCH_COLD_START {...}` with the timings, then exits
// (the SDK's keep-alive sockets would otherwise hold the process open).
//
// It also splits the first request by its outgoing HTTP requests (the DynamoDB calls, and any
// other the function makes), seen through Node's `http.client.*` diagnostics channels:
// `beforeSendMs` from the handler's call to its first request out, `waitMs` from there to the last
// answer's end (or its headers, when nothing reads its body), `afterMs` from then to the handler's
// result, and `sends`, the requests that went out. The wait holds whatever the function does
// between its requests. A phase is null when there is nothing to split: no request out, or none
// answered. `node:diagnostics_channel` is loaded before the clock starts, as `node:fs` and
// `node:url` are; `node:http` would load it with a function's first request, so that fraction of a
// millisecond leaves every figure, the baseline's included.
//
// usage: node cold-start-driver.mjs <bundle file> <event json file>
import { subscribe } from 'node:diagnostics_channel';
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

// The first request's outgoing HTTP requests (none is counted during the import).
const traffic = { counting: false, sends: 0, firstSend: Number.NaN, lastAnswer: Number.NaN };
subscribe('http.client.request.start', () => {
  if (!traffic.counting) return;
  traffic.sends += 1;
  if (traffic.sends === 1) traffic.firstSend = performance.now();
});
const answered = () => {
  if (traffic.counting) traffic.lastAnswer = performance.now();
};
subscribe('http.client.response.finish', ({ response }) => {
  answered();
  // The body's end, when the function reads it (an 'end' listener does not start the flow).
  response.once('end', answered);
});
let cpuMs = Number.NaN;
let status;
let error;
let importMs = Number.NaN;
let firstRequestMs = Number.NaN;
let beforeSendMs = null;
let waitMs = null;
let afterMs = null;
try {
  const mod = await import(pathToFileURL(bundleFile).href);
  const imported = performance.now();
  importMs = imported - startedMs;
  traffic.counting = true;
  const res = await mod.handler(event, context);
  const done = performance.now();
  traffic.counting = false;
  firstRequestMs = done - imported;
  if (traffic.sends > 0) {
    beforeSendMs = traffic.firstSend - imported;
    if (Number.isFinite(traffic.lastAnswer)) {
      waitMs = traffic.lastAnswer - traffic.firstSend;
      afterMs = done - traffic.lastAnswer;
    }
  }
  const cpu = process.cpuUsage(cpuAtStart);
  cpuMs = (cpu.user + cpu.system) / 1000;
  status = res && typeof res === 'object' && 'statusCode' in res ? res.statusCode : res === undefined ? 'undefined' : 'ok';
} catch (err) {
  error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
process.stdout.write(`\nBENCH_COLD_START ${JSON.stringify({ startedMs, importMs, firstRequestMs, cpuMs, status, error, beforeSendMs, waitMs, afterMs, sends: traffic.sends })}\n`);
process.exit(0);
