/** Refuses a body over `GATEHOUSE_MAX_BODY_BYTES` (413 `PayloadTooLarge`) before anything reads it. */
import type { Config } from '../../config.ts';
import { ApiError } from '../../errors.ts';
import type { PipelineMiddleware, PipelineRequest } from './state.ts';

export function bodyLimit(configOf: () => Pick<Config, 'maxBodyBytes'>): PipelineMiddleware {
  return {
    before: function refuseLargeBody(request: PipelineRequest) {
      const config = configOf();
      const body = request.event.body;
      if (!body) return;
      const bytes = request.event.isBase64Encoded ? Math.floor((body.length * 3) / 4) : Buffer.byteLength(body);
      if (bytes > config.maxBodyBytes) {
        throw new ApiError(413, 'PayloadTooLarge', `The request body is larger than ${config.maxBodyBytes} bytes.`);
      }
    },
  };
}
