// One warm Lambda execution environment for one function's deployment package, run by plain
// `node` (no TypeScript loader: the package must stand on its own, as in AWS).
//
// It loads the handler the way the Lambda Node.js runtime does (aws-lambda-nodejs-runtime-
// interface-client, UserFunction.js): the handler string `<path>/<module>.<export path>` names a
// module file in the task root, tried as the extensionless file, `.js` (CommonJS unless the
// nearest package.json says "type": "module"), `.mjs`, then `.cjs`; the export path is walked
// with dots. Then it serves invocations sent by the parent over IPC, one at a time, each with a
// Lambda context, and answers with the handler's result or its error.
//
// usage: node lambda-runtime.mjs <task root> <handler string>   (the environment is the function's)
// IPC in:  { id, event, timeoutMs }
// IPC out: { type: 'ready', exports: [...] } | { type: 'init-error', error }
//          { type: 'result', id, result } | { type: 'error', id, error }
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [taskRoot, handlerString] = process.argv.slice(2);

function describe(err) {
  if (err instanceof Error) return { name: err.name, message: err.message, code: err.code, stack: err.stack };
  return { name: 'Error', message: String(err) };
}

/** `lib/index.handler` → { moduleRoot: 'lib', module: 'index', path: 'handler' } (the runtime's own split). */
function splitHandler(handler) {
  const slash = handler.lastIndexOf('/');
  const moduleRoot = slash < 0 ? '' : handler.slice(0, slash);
  const match = /^([^.]*)\.(.*)$/.exec(handler.slice(slash + 1));
  if (!match) throw Object.assign(new Error(`Bad handler ${handler}`), { name: 'Runtime.MalformedHandlerName' });
  if (moduleRoot.split('/').includes('..')) throw Object.assign(new Error(`'${handler}' is not a valid handler name.`), { name: 'Runtime.MalformedHandlerName' });
  return { moduleRoot, module: match[1], path: match[2] };
}

/** Whether the nearest package.json above `file` declares ES modules. */
function packageTypeIsModule(file) {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const pj = join(dir, 'package.json');
    if (existsSync(pj)) {
      try {
        return JSON.parse(readFileSync(pj, 'utf8')).type === 'module';
      } catch {
        return false;
      }
    }
    if (dirname(dir) === dir) return false;
  }
}

async function loadModule(root, moduleRoot, module) {
  const base = resolve(root, moduleRoot, module);
  const require = createRequire(join(root, 'noop.js'));
  if (existsSync(base)) return require(base);
  const isModule = packageTypeIsModule(base);
  if (!isModule && existsSync(`${base}.js`)) return require(`${base}.js`);
  if (isModule && existsSync(`${base}.js`)) return import(pathToFileURL(`${base}.js`).href);
  if (existsSync(`${base}.mjs`)) return import(pathToFileURL(`${base}.mjs`).href);
  if (existsSync(`${base}.cjs`)) return require(`${base}.cjs`);
  throw Object.assign(new Error(`Cannot find module '${module}'`), { name: 'Runtime.ImportModuleError' });
}

function context(id, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  const functionName = process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'function';
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: process.env.AWS_LAMBDA_FUNCTION_VERSION ?? '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${process.env.AWS_REGION}:000000000000:function:${functionName}`,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? '128',
    awsRequestId: id,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/${process.pid}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

let handler;
try {
  const { moduleRoot, module, path } = splitHandler(handlerString);
  const mod = await loadModule(taskRoot, moduleRoot, module);
  handler = path.split('.').reduce((o, k) => (o == null ? undefined : o[k]), mod);
  if (typeof handler !== 'function') {
    throw Object.assign(new Error(`${module}.${path} is undefined or not exported`), { name: 'Runtime.HandlerNotFound' });
  }
  process.send({ type: 'ready', exports: Object.keys(mod) });
} catch (err) {
  process.send({ type: 'init-error', error: describe(err) }, () => process.exit(1));
}

// One invocation at a time, as in one execution environment.
let queue = Promise.resolve();
process.on('message', (msg) => {
  queue = queue.then(async () => {
    try {
      const result = await handler(msg.event, context(msg.id, msg.timeoutMs ?? 30_000));
      process.send({ type: 'result', id: msg.id, result: result === undefined ? null : result });
    } catch (err) {
      process.send({ type: 'error', id: msg.id, error: describe(err) });
    }
  });
});
process.on('disconnect', () => process.exit(0));
