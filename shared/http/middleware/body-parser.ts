/** Reads the body: JSON (400 `InvalidJson` when it is not), or kept raw for a form. */
import { badRequest } from '../../errors.ts';
import { parseJson } from '../../json.ts';
import { requiredState, type HttpEvent, type PipelineMiddleware, type PipelineRequest } from './state.ts';

function bodyText(event: HttpEvent): string | undefined {
  if (event.body === undefined || event.body === null) return undefined;
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

export function bodyParser(): PipelineMiddleware {
  return {
    before: function parseBody(request: PipelineRequest) {
      const s = requiredState(request.event);
      const req = s.req!;
      const text = bodyText(request.event);
      if (text === undefined || text.length === 0) return;
      const type = (req.headers['content-type'] ?? '').toLowerCase();
      if (type.startsWith('application/x-www-form-urlencoded') || (req.route.form && !text.trimStart().startsWith('{'))) {
        s.req = { ...req, rawBody: text };
        return;
      }
      // JSON is the API's only body format; clients send it with or without a content type.
      // GET bodies are kept: two calls of the spec carry their input in a GET body.
      if (text.trim().length === 0) return;
      try {
        s.req = { ...req, body: parseJson(text), rawBody: text };
      } catch (err) {
        throw badRequest('InvalidJson', `The request body is not valid JSON: ${(err as Error).message}`);
      }
    },
  };
}
