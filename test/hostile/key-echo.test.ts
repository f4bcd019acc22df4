import { inspect } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client.js';
import { isNetworkError } from '../../src/errors/transport-errors.js';
import { createHttpClient } from '../../src/http/client.js';
import { API_KEY } from '../http/support/loopback-server.js';
import { startHostileServer, writeRaw } from './hostile-server.js';

const percentEncoded = (text: string): string => text.replace(/[\s\S]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);

interface EchoedKey {
  /** How the key reads in a plain-text body. */
  readonly text: string;
  /** How it is written inside a JSON string literal (where `\u0053` is JSON's own escape, undone by parsing). */
  readonly json: string;
}

const as = (text: string): EchoedKey => ({ text, json: JSON.stringify(text).slice(1, -1) });

/** The key as a server may echo it. */
const FORMS = {
  plain: as(API_KEY),
  'JSON-escaped': { text: API_KEY.replace(/S/g, '\\u0053'), json: API_KEY.replace(/S/g, '\\u0053') },
  'split by an escape': as(`${API_KEY.slice(0, 12)}\\x${API_KEY.charCodeAt(12).toString(16)}${API_KEY.slice(13)}`),
  'URL-encoded': as(percentEncoded(API_KEY)),
  'URL-encoded twice': as(percentEncoded(API_KEY).replace(/%/g, '%25')),
  'HTML character references': as(API_KEY.replace(/[\s\S]/g, (c) => `&#${c.charCodeAt(0)};`)),
  'upper case': as(API_KEY.toUpperCase()),
} satisfies Record<string, EchoedKey>;

type Form = keyof typeof FORMS;
const forms = Object.keys(FORMS) as Form[];

/** Every text a leak could show up in: the message, a deep inspect, JSON and the stack. */
function everyView(value: unknown): string {
  return [String(value), inspect(value, { depth: 10, showHidden: true, getters: true }), (JSON.stringify(value) as string | undefined) ?? '', value instanceof Error ? (value.stack ?? '') : ''].join('\n');
}

/** The key must show in none of its forms: neither plain nor as the server encoded it. */
function expectNoKey(value: unknown): void {
  const views = everyView(value);
  expect(views.toLowerCase()).not.toContain(API_KEY.toLowerCase());
  for (const form of forms) expect(views).not.toContain(FORMS[form].text);
}

/** Answers that carry server text into an error, one per way the service fails (service.md §1.2, §1.3). */
const ANSWERS = {
  'framework 401': (form: Form) => ({ status: 401, type: 'application/json', body: `{"statusCode":401,"message":"Invalid API key ${FORMS[form].json}","error":"Unauthorized"}` }),
  'HTTP-200 envelope': (form: Form) => ({ status: 200, type: 'application/json', body: `{"success":false,"errCode":"E0004","errMsg":"Bad key ${FORMS[form].json}","traceId":"${FORMS[form].json}"}` }),
  'validation list': (form: Form) => ({ status: 400, type: 'application/json', body: `{"statusCode":400,"message":["token ${FORMS[form].json}","other"],"error":"Bad Request"}` }),
  'plain-text 500': (form: Form) => ({ status: 500, type: 'text/plain', body: `upstream refused Authorization: Bearer ${FORMS[form].text}` }),
  'HTML 502': (form: Form) => ({ status: 502, type: 'text/html', body: `<html><body><p>Bad gateway for ${FORMS[form].text}</p></body></html>` }),
} as const;
type AnswerKind = keyof typeof ANSWERS;

describe('a server that echoes the API key', () => {
  it('shows it in no error, whatever the answer and however the key is encoded', async () => {
    const cases = (Object.keys(ANSWERS) as AnswerKind[]).flatMap((kind) => forms.map((form) => ({ kind, form })));
    const server = await startHostileServer((_request, response, index) => {
      const { kind, form } = cases[index]!;
      const answer = ANSWERS[kind](form);
      response.writeHead(answer.status, { 'content-type': answer.type });
      response.end(answer.body);
    });
    const client = createHttpClient({ apiKey: API_KEY, baseUrl: server.baseUrl, retry: false });
    for (const { kind, form } of cases) {
      const error: unknown = await client.workflows.get('c-1').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, `${kind}, ${form}`).toBeInstanceOf(Error);
      expect((error as Error).message, `${kind}, ${form}`).toContain('[redacted]');
      expectNoKey(error);
    }
    expect(server.requests).toHaveLength(cases.length);
  });

  it('shows it in no error when it rides in the status line or the headers', async () => {
    const server = await startHostileServer((_request, response) => {
      response.writeHead(500, `Invalid ${API_KEY}`, { 'x-trace-id': API_KEY, 'www-authenticate': `Bearer error="invalid_token" token="${API_KEY}"` });
      response.end();
    });
    const error: unknown = await createHttpClient({ apiKey: API_KEY, baseUrl: server.baseUrl, retry: false }).executions.status('we-1').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'SERVER_ERROR', status: 500 });
    expectNoKey(error);
  });

  it('shows it in no network error when a malformed answer quotes it (fetch keeps the bytes it could not parse)', async () => {
    const raws = [`HTTP/1.1 2${API_KEY} OK\r\n\r\n`, `HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n${API_KEY}\r\n`, `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${percentEncoded(API_KEY)}\r\n`];
    const server = await startHostileServer((_request, response, index) => {
      writeRaw(response, raws[index] ?? '');
    });
    const client = createHttpClient({ apiKey: API_KEY, baseUrl: server.baseUrl, retry: false });
    for (const raw of raws) {
      const error: unknown = await client.executions.status('we-1').catch((e: unknown) => e);
      expect(isNetworkError(error), raw).toBe(true);
      expect((error as Error).cause, raw).toBeInstanceOf(Error); // what fetch said stays readable, the key taken out
      expectNoKey(error);
    }
  });

  it('shows it in no redirect error when the Location quotes it', async () => {
    const server = await startHostileServer((_request, response) => {
      response.writeHead(302, { location: `https://elsewhere.example/login?token=${percentEncoded(API_KEY)}&next=${API_KEY}` });
      response.end();
    });
    const error: unknown = await createHttpClient({ apiKey: API_KEY, baseUrl: server.baseUrl, retry: false }).workflows.search().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'UNEXPECTED_REDIRECT', location: expect.stringContaining('https://elsewhere.example/login?token=') as unknown });
    expectNoKey(error);
  });

  it('shows it in no upload error', async () => {
    const server = await startHostileServer((_request, response) => {
      response.writeHead(413, { 'content-type': 'application/json' });
      response.end(`{"statusCode":413,"message":"File too large for ${FORMS['JSON-escaped'].json}","error":"Payload Too Large"}`);
    });
    const error: unknown = await createHttpClient({ apiKey: API_KEY, baseUrl: server.baseUrl, retry: false })
      .files.upload([new File(['x'], 'x.txt')])
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expectNoKey(error);
  });

  it('hands it to no caller, error or log when it hides in the data of a run (node errors, statuses)', async () => {
    const escaped = FORMS['JSON-escaped'].json;
    const server = await startHostileServer((request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      if (request.url.endsWith('/status')) {
        response.end(
          `{"success":true,"data":{"executionId":"we-1","status":"failed","nodeExecutions":[` +
            `{"nodeId":"node-1","status":"failed","title":"Fetch ${escaped}","errorMessage":"[\\"401 for ${escaped}\\"]"},` +
            `{"nodeId":"node-2","status":"paused-${escaped}","title":"Next"}]}}`,
        );
      } else {
        response.end(`{"success":true,"data":{"output":[{"nodeId":"node-1","title":"Fetch","status":"failed","errorMessage":"401 for ${escaped}","messages":[{"messageId":"am-1","type":"ai","content":"token ${escaped}"}]}],"files":[]}}`);
      }
    });
    const logger = { warn: vi.fn(), debug: vi.fn(), error: vi.fn() };
    const client = createClient({ apiKey: API_KEY, baseUrl: server.baseUrl, budget: false, logger });
    const events: unknown[] = [];
    const error = await new Promise<unknown>((resolve) => {
      client.watch('we-1').subscribe({ next: (event) => events.push(event), error: resolve, complete: () => { resolve(undefined); } });
    });
    expect(error).toMatchObject({ code: 'WORKFLOW_FAILED' });
    expect((error as Error).message).toContain('[redacted]');
    expectNoKey(error);
    expectNoKey(events);
    expect(logger.warn).toHaveBeenCalled();
    expectNoKey([logger.warn.mock.calls, logger.debug.mock.calls, logger.error.mock.calls]);
  });
});
