/**
 * AWS list prices: the stack's cost estimate (observability.ts) and the benchmark's cost model
 * (bench/cost.ts, which writes docs/cost.md) both price from these, so the infrastructure never
 * imports the benchmark.
 */

/**
 * List prices of one region, on-demand, without free tiers, as remembered on {@link PRICES_AS_OF}
 * (not fetched: the benchmark runs offline). Check them against the AWS pricing pages before
 * relying on the dollars.
 */
export const PRICES_AS_OF = '2025-01-01';
export const PRICES_REGION = 'us-east-1';

/** API Gateway HTTP API: per million requests (first 300 million a month; 512 KB increments). */
export const HTTP_API_PER_MILLION_REQUESTS = 1.0;
/** Lambda: per million requests. */
export const LAMBDA_PER_MILLION_REQUESTS = 0.2;
/** Lambda arm64 (Graviton): per GB-second (first 7.5 billion GB-seconds a month), billed per 1 ms. */
export const LAMBDA_ARM64_PER_GB_SECOND = 0.0000133334;
/** DynamoDB on-demand (after the November 2024 price cut): per million read request units. */
export const DYNAMODB_PER_MILLION_READ_REQUEST_UNITS = 0.125;
/** DynamoDB on-demand: per million write request units. */
export const DYNAMODB_PER_MILLION_WRITE_REQUEST_UNITS = 0.625;
/** API Gateway WebSocket: per million messages (first billion a month), metered in 32 KB increments. */
export const WEBSOCKET_PER_MILLION_MESSAGES = 1.0;
export const WEBSOCKET_MESSAGE_INCREMENT_BYTES = 32 * 1024;
/** API Gateway WebSocket: per million connection minutes. */
export const WEBSOCKET_PER_MILLION_CONNECTION_MINUTES = 0.25;
/** AWS IoT Core: per million messages (first billion a month), metered in 5 KB increments; a publish and each delivery count. */
export const IOT_PER_MILLION_MESSAGES = 1.0;
export const IOT_MESSAGE_INCREMENT_BYTES = 5 * 1024;
/** AWS IoT Core: per million connection minutes. */
export const IOT_PER_MILLION_CONNECTION_MINUTES = 0.08;
/** SQS standard queue: per million requests (each 64 KB chunk of a request counts as one). */
export const SQS_PER_MILLION_REQUESTS = 0.4;
