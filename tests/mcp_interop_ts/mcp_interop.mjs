#!/usr/bin/env node
// Interop test: the official MCP TypeScript SDK against the shape example server
// `examples/mcp_support_desk.rs`, over stdio; the TypeScript counterpart of
// `tests/mcp_interop.py`.
//
// Both lines of the SDK: `@modelcontextprotocol/sdk` 1.x (npm's `latest`; its default output
// validator is classic Ajv, which applies draft-07 rules whatever a schema declares) and
// `@modelcontextprotocol/client` 2.x (Ajv 2020, or classic Ajv for a schema that declares
// draft-07). For each, it connects under one client name per channel profile (`claude-code`
// and `codex-mcp-client` read the structured channel, `open-webui` the text, and a name no
// table knows gets both), lists the tools, pages `search_tickets` to the end by the `next`
// the model reads (every ticket exactly once, newest update first), calls `get_ticket`,
// `open_result` and a bad cursor, and counts what that profile's model reads against the
// budget (o200k_base, js-tiktoken) and Codex's own cuts. `callTool` validates every
// `structuredContent` against the tool's `outputSchema` and throws when it does not match; a
// throw is a failed check. Last, every answer received is validated again under each of the
// SDKs' validators (Ajv and @cfworker/json-schema, 1.x and 2.x), and answers made wrong on
// purpose (a wrong type at each row position, a row one value too long or too short, an
// object with a wrong, extra or missing field) must be rejected by every one of them. And over
// streamable HTTP with a bearer token per principal (`SHAPE_TOKENS`), under each SDK: no
// token or a wrong one is refused with the server's reason, and one principal's handle and
// cursor read for the other exactly as ones that never existed.
//
// Run by hand (the README's test section):
//
//     cargo build --example mcp_support_desk --all-features
//     (cd tests/mcp_interop_ts && npm ci && node mcp_interop.mjs [--server PATH])
//
// The last line is `interop-ts: N passed, M failed`; the exit code is 1 when anything failed.

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as Stdio1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as Http1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator as Ajv1 } from '@modelcontextprotocol/sdk/validation/ajv';
import { CfWorkerJsonSchemaValidator as CfWorker1 } from '@modelcontextprotocol/sdk/validation/cfworker';
import { Client as Client2, StreamableHTTPClientTransport as Http2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as Stdio2 } from '@modelcontextprotocol/client/stdio';
import { AjvJsonSchemaValidator as Ajv2 } from '@modelcontextprotocol/client/validators/ajv';
import { CfWorkerJsonSchemaValidator as CfWorker2 } from '@modelcontextprotocol/client/validators/cf-worker';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k_base from 'js-tiktoken/ranks/o200k_base';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
// The version installed (npm ci from package-lock.json), as it is running.
const version = (pkg) => JSON.parse(readFileSync(join(HERE, 'node_modules', pkg, 'package.json'), 'utf8')).version;

// What the server seeds (examples/common/desk_db.rs) and answers with
// (examples/mcp_support_desk.rs): the count the pages must add up to, the tools, the budget.
const DB_TICKETS = 5_000;
const TOOLS = ['get_ticket', 'open_result', 'search_tickets'];
const BUDGET = 1_500; // tokens per answer, envelope included (o200k_base): `BUDGET` there
const PAGE_SIZE = 25;
const SIZE_HINT_KEY = 'anthropic/maxResultSizeChars';
const CALL_TIMEOUT_MS = 30_000;
const MAX_PAGES = 1_000; // far above the 200 a 5,000-ticket walk at 25 a page takes
// The channel profile each name gets (shape-runtime/src/clients.rs), and the cuts a client
// makes itself (Codex: 10 KiB or 256 lines).
const PROFILES = [
  { name: 'claude-code', profile: 'structured' },
  { name: 'codex-mcp-client', profile: 'structured', cuts: { bytes: 10 * 1024, lines: 256 } },
  { name: 'open-webui', profile: 'text' },
  { name: 'someone-new', profile: 'both' },
];
// `callTool`'s options are its third argument in 1.x (after a result schema), its second in 2.x.
const SDKS = [
  {
    label: `@modelcontextprotocol/sdk ${version('@modelcontextprotocol/sdk')}`,
    Client: Client1,
    Stdio: Stdio1,
    Http: Http1,
    callTool: (client, params, options) => client.callTool(params, undefined, options),
  },
  {
    label: `@modelcontextprotocol/client ${version('@modelcontextprotocol/client')}`,
    Client: Client2,
    Stdio: Stdio2,
    Http: Http2,
    callTool: (client, params, options) => client.callTool(params, options),
  },
];
// Every validator the SDKs ship, as a client would build it with default options.
const VALIDATORS = [
  { label: `sdk ${version('@modelcontextprotocol/sdk')} Ajv (default)`, make: () => new Ajv1() },
  { label: `sdk ${version('@modelcontextprotocol/sdk')} @cfworker/json-schema`, make: () => new CfWorker1() },
  { label: `client ${version('@modelcontextprotocol/client')} Ajv (default)`, make: () => new Ajv2() },
  { label: `client ${version('@modelcontextprotocol/client')} @cfworker/json-schema`, make: () => new CfWorker2() },
];

const tokenizer = new Tiktoken(o200k_base);
const tokens = (text) => tokenizer.encode(text).length;

class Checks {
  passed = 0;
  failed = 0;
  check(name, ok, detail = '') {
    if (ok) {
      this.passed += 1;
      console.log(`ok   ${name}`);
    } else {
      this.failed += 1;
      console.log(`FAIL ${name}: ${String(detail).slice(0, 400)}`);
    }
    return ok;
  }
}

function defaultServer() {
  const target = process.env.CARGO_TARGET_DIR || join(ROOT, 'target');
  return join(isAbsolute(target) ? target : join(ROOT, target), 'debug', 'examples', 'mcp_support_desk');
}

/** The records of an envelope in either form: `data` of objects, or `fields` zipped with
 * each array in `data` (the rows form). */
function recordsOf(envelope) {
  if (Array.isArray(envelope?.fields)) {
    return (envelope.data ?? []).map((row) => Object.fromEntries(envelope.fields.map((f, i) => [f, row[i]])));
  }
  return envelope?.data ?? [];
}

/** The text channel's parts: the head line, the record lines, and the cursor of `next:`. */
function parseProse(text) {
  // A complete answer has no `omitted:` or `next:` line: its records run to its end (the
  // newline that ends the last one).
  const lines = text.replace(/\n$/, '').split('\n');
  const omitted = lines.findIndex((line) => line.startsWith('omitted: '));
  const records = lines.slice(1, omitted > 0 ? omitted : lines.length);
  const next = lines.find((line) => line.startsWith('next: '));
  const cursor = next?.match(/cursor=(\S+)/)?.[1] ?? null;
  return { head: lines[0] ?? '', records, ids: records.map((line) => line.split(' ')[0]), next, cursor };
}

const textOf = (result) => {
  const texts = (result.content ?? []).filter((c) => c.type === 'text');
  return texts.length === 1 ? texts[0].text : '';
};

/** One connected client: the SDK's `Client` under `name`, the server's stderr kept. */
class Session {
  constructor(sdk, server, who, checks) {
    this.sdk = sdk;
    this.who = who;
    this.checks = checks;
    this.log = [];
    this.transport = new sdk.Stdio({ command: server, args: [], env: { ...process.env, RUST_LOG: 'info' }, stderr: 'pipe' });
    // Drained as it comes (a full pipe would stall the server); the last lines kept for a failure.
    this.transport.stderr?.on('data', (chunk) => {
      this.log.push(...String(chunk).split('\n').filter(Boolean));
      if (this.log.length > 40) this.log.splice(0, this.log.length - 40);
    });
    this.client = new sdk.Client({ name: who.name, version: '1.0' });
    this.answers = []; // every structuredContent received, with its tool
    this.overBudget = [];
    this.throws = [];
    this.calls = 0;
  }

  async connect() {
    await this.client.connect(this.transport);
  }

  async close() {
    await this.client.close();
  }

  /** Calls `tool`; a throw (the SDK's own schema validation among the causes) is recorded.
   * Counts what this profile's model reads: Claude Code reads `JSON.stringify(structuredContent)`
   * when there is one and the text of an error; a text reader the text; under both, each
   * channel is within the budget on its own. */
  async call(tool, args) {
    this.calls += 1;
    let result;
    try {
      result = await this.sdk.callTool(this.client, { name: tool, arguments: args }, { timeout: CALL_TIMEOUT_MS });
    } catch (e) {
      this.throws.push(`${tool}(${JSON.stringify(args).slice(0, 80)}): ${e.message}`);
      return null;
    }
    const text = textOf(result);
    const structured = result.structuredContent;
    if (structured !== undefined) this.answers.push({ tool, structured, who: this.who.name });
    const read = [];
    const { profile, cuts } = this.who;
    if (profile !== 'text' && structured !== undefined && !result.isError) read.push(['structuredContent', JSON.stringify(structured)]);
    if (profile !== 'structured' || result.isError) read.push(['text', text]);
    if (profile === 'structured' && !result.isError) read.push(['text (the envelope as JSON)', text]);
    for (const [channel, body] of read) {
      const n = tokens(body);
      if (n > BUDGET) this.overBudget.push(`${tool} ${channel}: ${n} tokens over ${BUDGET}`);
      if (cuts && Buffer.byteLength(body) > cuts.bytes) this.overBudget.push(`${tool} ${channel}: ${Buffer.byteLength(body)} bytes over ${cuts.bytes}`);
      if (cuts && body.split('\n').length > cuts.lines) this.overBudget.push(`${tool} ${channel}: ${body.split('\n').length} lines over ${cuts.lines}`);
      this.maxTokens = Math.max(this.maxTokens ?? 0, n);
    }
    return { result, text, structured };
  }
}

/** One session under one client name: tools/list, the whole search by `next`, a lookup, a
 * reopened handle, and errors. */
async function profileScenario(sdk, server, who, checks) {
  const tag = `${sdk.label} as ${who.name} (${who.profile})`;
  const session = new Session(sdk, server, who, checks);
  await session.connect();
  try {
    const listed = await session.client.listTools(undefined, { timeout: CALL_TIMEOUT_MS });
    const tools = Object.fromEntries(listed.tools.map((t) => [t.name, t]));
    checks.check(`${tag}: tools/list names ${TOOLS.join(', ')}`, JSON.stringify(Object.keys(tools).sort()) === JSON.stringify(TOOLS), Object.keys(tools));
    const withSchema = who.profile !== 'text';
    checks.check(
      `${tag}: tools/list ${withSchema ? 'declares' : 'leaves out'} every outputSchema`,
      listed.tools.every((t) => (t.outputSchema !== undefined) === withSchema),
      listed.tools.map((t) => `${t.name}: ${t.outputSchema !== undefined}`),
    );
    checks.check(
      `${tag}: every tool carries _meta[${SIZE_HINT_KEY}]`,
      listed.tools.every((t) => Number.isInteger(t._meta?.[SIZE_HINT_KEY]) && t._meta[SIZE_HINT_KEY] > 0),
      listed.tools.map((t) => t._meta),
    );
    const schemas = Object.fromEntries(listed.tools.filter((t) => t.outputSchema).map((t) => [t.name, t.outputSchema]));

    // The whole search, by the cursor the model reads: the envelope's `next`, or the prose's.
    const ids = [];
    const updates = [];
    const statuses = [];
    const problems = [];
    let first = null;
    let cursor = null;
    let pages = 0;
    const started = Date.now();
    for (; pages < MAX_PAGES; pages += 1) {
      const answer = await session.call('search_tickets', cursor === null ? {} : { cursor });
      if (answer === null) break;
      const { result, text, structured } = answer;
      first ??= answer;
      if (result.isError) {
        problems.push(`page ${pages + 1} is an error: ${text.slice(0, 160)}`);
        break;
      }
      const prose = parseProse(text);
      let pageIds;
      let next;
      if (who.profile === 'text') {
        if (structured !== undefined) problems.push(`page ${pages + 1}: structuredContent for a text reader`);
        pageIds = prose.ids;
        next = prose.cursor;
        statuses.push(prose.head.split(':')[0]);
        updates.push(...prose.records.map((line) => line.match(/updated (\S+)$/)?.[1] ?? ''));
      } else {
        if (structured === undefined) {
          problems.push(`page ${pages + 1}: no structuredContent`);
          break;
        }
        const records = recordsOf(structured);
        const rows = Array.isArray(structured.fields);
        if (rows !== (who.profile === 'structured')) problems.push(`page ${pages + 1}: ${rows ? 'rows' : 'objects'} form under ${who.profile}`);
        pageIds = records.map((r) => r.id);
        updates.push(...records.map((r) => r.last_update));
        next = structured.next;
        statuses.push(structured.status);
        if (who.profile === 'structured') {
          let parsed = null;
          try {
            parsed = JSON.parse(text);
          } catch {
            // left null: the check below fails
          }
          if (JSON.stringify(parsed) !== JSON.stringify(structured)) problems.push(`page ${pages + 1}: the text block is not the envelope's JSON`);
        } else if (JSON.stringify(prose.ids) !== JSON.stringify(pageIds) || prose.cursor !== next) {
          // Two channels, one meaning: the prose shows the same tickets and the same cursor.
          problems.push(`page ${pages + 1}: the text channel shows ${prose.ids.length} tickets and cursor ${prose.cursor}, the structured ${pageIds.length} and ${next}`);
        }
      }
      if (pageIds.length === 0 || pageIds.length > PAGE_SIZE) problems.push(`page ${pages + 1}: ${pageIds.length} tickets`);
      ids.push(...pageIds);
      if (next === null || next === undefined) {
        pages += 1;
        break;
      }
      cursor = next;
    }
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    checks.check(`${tag}: callTool never threw (every structuredContent matched its outputSchema)`, session.throws.length === 0, session.throws.slice(0, 2).join('; '));
    checks.check(`${tag}: walked search_tickets by next: ${pages} pages, ${ids.length} tickets in ${seconds} s`, problems.length === 0 && pages > 1, problems.slice(0, 3).join('; '));
    const distinct = new Set(ids);
    checks.check(
      `${tag}: every ticket exactly once (${distinct.size} distinct of ${DB_TICKETS})`,
      ids.length === DB_TICKETS && distinct.size === DB_TICKETS && ids.every((id) => /^tkt_[0-9a-f]{8}$/.test(id)),
      `${ids.length} shown, ${distinct.size} distinct; first ids ${ids.slice(0, 3)}`,
    );
    checks.check(
      `${tag}: newest update first across pages; partial pages, then ok`,
      updates.length === ids.length && updates.every((u, i) => i === 0 || updates[i - 1] >= u)
        && statuses.slice(0, -1).every((s) => s === 'partial') && statuses.at(-1) === 'ok',
      `statuses ${statuses.slice(-3)}; ${updates.length} dates`,
    );
    const handle = first?.structured?.omitted?.handle ?? first?.text.match(/handle=(h_\S+)/)?.[1];

    // A lookup by the short id, a reopened handle, and errors: none may throw.
    if (ids.length > 0) {
      const got = await session.call('get_ticket', { id: ids[0] });
      const gotIds = got === null ? [] : who.profile === 'text' ? parseProse(got.text).ids : recordsOf(got.structured).map((r) => r.id);
      checks.check(`${tag}: get_ticket(${ids[0]}) answers that ticket`, got !== null && !got.result.isError && JSON.stringify(gotIds) === JSON.stringify([ids[0]]), got?.text.slice(0, 200));
    }
    checks.check(`${tag}: the first page stores the whole result behind a handle`, typeof handle === 'string' && handle.startsWith('h_'), first?.text.slice(0, 200));
    if (typeof handle === 'string') {
      const args = { handle, filter: [{ field: 'status', op: 'equals', value: 'open' }], page_size: 5 };
      const opened = await session.call('open_result', args);
      const records = opened === null ? [] : who.profile === 'text' ? parseProse(opened.text).records : recordsOf(opened.structured);
      checks.check(
        `${tag}: open_result reopens the handle: 5 open tickets`,
        opened !== null && !opened.result.isError && records.length === 5
          && records.every((r) => (typeof r === 'string' ? r.includes(': open, ') : r.status === 'open')),
        opened?.text.slice(0, 200),
      );
    }
    const bad = await session.call('search_tickets', { cursor: 'not a cursor' });
    checks.check(
      `${tag}: a bad cursor: isError, the text says what to do, structuredContent ${who.profile === 'text' ? 'absent' : 'present'}`,
      bad !== null && bad.result.isError === true && bad.text.startsWith('error: ') && bad.text.includes('without a cursor')
        && (bad.structured === undefined) === (who.profile === 'text'),
      bad?.text.slice(0, 200),
    );
    const empty = await session.call('search_tickets', { query: '%' });
    checks.check(
      `${tag}: a search matching nothing: empty, not an error`,
      empty !== null && !empty.result.isError && (who.profile === 'text' ? empty.text.startsWith('empty: ') : empty.structured?.status === 'empty'),
      empty?.text.slice(0, 200),
    );
    checks.check(
      `${tag}: every one of ${session.calls} answers within what the model reads: ${BUDGET} tokens${who.cuts ? `, ${who.cuts.bytes} bytes, ${who.cuts.lines} lines` : ''} (largest ${session.maxTokens})`,
      session.overBudget.length === 0 && session.throws.length === 0,
      session.overBudget.slice(0, 3).join('; '),
    );
    return { schemas, answers: session.answers };
  } catch (e) {
    checks.check(`${tag}: the session ran to the end`, false, `${e.stack}\n     server log (last lines):\n       ${session.log.slice(-15).join('\n       ')}`);
    return { schemas: {}, answers: session.answers };
  } finally {
    await session.close().catch(() => {});
  }
}

const clone = (value) => JSON.parse(JSON.stringify(value));

/** A value of no type a field's schema admits. */
const WRONG = { not: 'a field value' };

/** Answers made wrong on purpose from real ones, each with what is wrong. */
function wrongAnswers(answers) {
  const wrong = [];
  const rows = answers.find((a) => a.tool === 'search_tickets' && Array.isArray(a.structured.fields) && a.structured.data.length > 0);
  if (rows) {
    const { fields } = rows.structured;
    fields.forEach((field, i) => {
      const bad = clone(rows.structured);
      bad.data[0][i] = WRONG;
      wrong.push({ tool: 'search_tickets', what: `rows: an object at position ${i} (${field})`, structured: bad });
    });
    const word = clone(rows.structured);
    word.data[0][fields.indexOf('status')] = 'sideways';
    wrong.push({ tool: 'search_tickets', what: 'rows: a status the legend does not have', structured: word });
    const long = clone(rows.structured);
    long.data[0].push(long.data[0].at(-1));
    wrong.push({ tool: 'search_tickets', what: `rows: a row one value too long (${long.data[0].length})`, structured: long });
    const short = clone(rows.structured);
    short.data[0].pop();
    wrong.push({ tool: 'search_tickets', what: `rows: a row one value too short (${short.data[0].length})`, structured: short });
    const swapped = clone(rows.structured);
    [swapped.fields[0], swapped.fields[1]] = [swapped.fields[1], swapped.fields[0]];
    wrong.push({ tool: 'search_tickets', what: 'rows: fields in another order', structured: swapped });
  }
  const objects = answers.find((a) => a.tool === 'search_tickets' && !('fields' in a.structured) && a.structured.data.length > 0);
  if (objects) {
    const typed = clone(objects.structured);
    typed.data[0].subject = 42;
    wrong.push({ tool: 'search_tickets', what: 'objects: a number as the subject', structured: typed });
    const extra = clone(objects.structured);
    extra.data[0].sla_due_at = '2026-03-01';
    wrong.push({ tool: 'search_tickets', what: 'objects: a field the projection leaves out', structured: extra });
    const missing = clone(objects.structured);
    delete missing.data[0].org;
    wrong.push({ tool: 'search_tickets', what: 'objects: a field missing', structured: missing });
    const row = clone(objects.structured);
    row.data[0] = Object.values(row.data[0]);
    wrong.push({ tool: 'search_tickets', what: 'objects: a row without fields', structured: row });
    const status = clone(objects.structured);
    status.status = 'fine';
    wrong.push({ tool: 'search_tickets', what: 'envelope: a status no envelope has', structured: status });
  }
  return wrong;
}

/** Every real answer valid, every wrong one rejected, under every validator the SDKs ship. */
function validatorMatrix(schemas, answers, checks) {
  const kinds = (a) => `${a.tool} ${a.structured.status} ${'fields' in a.structured ? 'rows' : 'objects'}`;
  const covered = [...new Set(answers.map(kinds))].sort();
  console.log(`     answers to validate: ${answers.length} (${covered.join('; ')})`);
  checks.check(
    'the answers cover both forms of search_tickets, errors and an empty answer',
    ['search_tickets partial rows', 'search_tickets partial objects', 'search_tickets error objects', 'search_tickets empty rows', 'search_tickets empty objects'].every((k) => covered.includes(k)),
    covered,
  );
  const wrong = wrongAnswers(answers);
  for (const { label, make } of VALIDATORS) {
    const validator = make();
    const compiled = {};
    let compileError = null;
    for (const [tool, schema] of Object.entries(schemas)) {
      try {
        compiled[tool] = validator.getValidator(schema);
      } catch (e) {
        compileError = `${tool}: ${e.message}`;
      }
    }
    if (!checks.check(`${label}: compiles every outputSchema`, compileError === null && Object.keys(compiled).length === TOOLS.length, compileError)) continue;
    const invalid = answers.filter((a) => !compiled[a.tool](a.structured).valid);
    checks.check(
      `${label}: accepts all ${answers.length} real answers`,
      invalid.length === 0,
      invalid.slice(0, 2).map((a) => `${kinds(a)} as ${a.who}: ${compiled[a.tool](a.structured).errorMessage}`).join('; '),
    );
    const accepted = wrong.filter((w) => compiled[w.tool](w.structured).valid);
    checks.check(
      `${label}: rejects all ${wrong.length} wrong answers (each row position's type, a row too long, too short, …)`,
      wrong.length >= 15 && accepted.length === 0,
      accepted.map((w) => w.what).join('; ') || `only ${wrong.length} wrong answers made`,
    );
  }
}

// ---- Principals over HTTP (issue 50): the server started with `--http` and two bearer tokens.
const PRINCIPALS = { alice: 'interop-alice-token-5b1e0c77', bob: 'interop-bob-token-9d26f4a3' };

const freePort = () =>
  new Promise((done, fail) => {
    const probe = createServer();
    probe.on('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => done(port));
    });
  });

const listening = (port) =>
  new Promise((done) => {
    const socket = createConnection({ port, host: '127.0.0.1' }, () => {
      socket.end();
      done(true);
    });
    socket.on('error', () => done(false));
  });

/** The example server over streamable HTTP with a token per principal, under each SDK: a
 * client without a token cannot connect; Alice's search stores its result and hands her a
 * cursor, both of which work for her; Bob's reading of her handle is his reading of a handle
 * never issued, and his reading of her cursor his reading of it altered. */
async function principalsScenario(server, checks) {
  const port = await freePort();
  const child = spawn(server, ['--http', `127.0.0.1:${port}`], {
    env: { ...process.env, RUST_LOG: 'error', SHAPE_TOKENS: Object.entries(PRINCIPALS).map(([p, t]) => `${p}=${t}`).join(',') },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  try {
    let up = false;
    for (let i = 0; i < 600 && !up; i += 1) {
      up = await listening(port);
      if (!up) await new Promise((r) => setTimeout(r, 100));
    }
    if (!checks.check('principals: the server listens over HTTP', up, `nothing on ${port}`)) return;
    const url = new URL(`http://127.0.0.1:${port}/mcp`);
    for (const sdk of SDKS) {
      const tag = `${sdk.label} over HTTP`;
      const as = async (token) => {
        const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
        const client = new sdk.Client({ name: 'claude-code', version: '1.0' });
        await client.connect(new sdk.Http(url, { requestInit }));
        return client;
      };
      const call = async (client, name, args) => sdk.callTool(client, { name, arguments: args }, { timeout: CALL_TIMEOUT_MS });
      let refused = null;
      try {
        const client = await as(null);
        await client.close();
      } catch (e) {
        refused = e;
      }
      checks.check(`${tag}: a client without a token cannot connect`, refused !== null && /needs credentials: send `Authorization: Bearer/.test(String(refused?.message ?? refused)), refused ? refused.message : 'it connected');
      let wrong = null;
      try {
        const client = await as('a-token-nobody-was-given-00');
        await client.close();
      } catch (e) {
        wrong = e;
      }
      checks.check(`${tag}: a client with a wrong token cannot connect, told why`, wrong !== null && /bearer token was refused/.test(String(wrong?.message ?? wrong)), wrong ? wrong.message : 'it connected');
      const alice = await as(PRINCIPALS.alice);
      const bob = await as(PRINCIPALS.bob);
      try {
        const first = await call(alice, 'search_tickets', {});
        const handle = first.structuredContent?.omitted?.handle;
        const cursor = first.structuredContent?.next;
        if (!checks.check(`${tag}: Alice's search stores its result and gives a cursor`, typeof handle === 'string' && typeof cursor === 'string', JSON.stringify(first.structuredContent).slice(0, 300))) continue;
        const opened = await call(alice, 'open_result', { handle, page_size: 5 });
        checks.check(`${tag}: Alice opens her handle`, !opened.isError, textOf(opened));
        const second = await call(alice, 'search_tickets', { cursor });
        checks.check(`${tag}: Alice follows her cursor`, !second.isError && recordsOf(second.structuredContent).length > 0, textOf(second));
        const madeUp = handle.replace(/[0-9]/g, (d) => String((Number(d) + 1) % 10));
        const taken = await call(bob, 'open_result', { handle, page_size: 5 });
        const never = await call(bob, 'open_result', { handle: madeUp, page_size: 5 });
        checks.check(
          `${tag}: Bob's reading of Alice's handle is his reading of one never issued`,
          taken.isError === true && textOf(taken).replaceAll(handle, 'H') === textOf(never).replaceAll(madeUp, 'H'),
          `${textOf(taken)} | ${textOf(never)}`,
        );
        const last = cursor.at(-1);
        const altered = cursor.slice(0, -1) + (last > '0' ? String(Number(last) - 1) : '1');
        const followed = await call(bob, 'search_tickets', { cursor });
        const forged = await call(bob, 'search_tickets', { cursor: altered });
        checks.check(
          `${tag}: Bob's reading of Alice's cursor is his reading of it altered`,
          followed.isError === true && textOf(followed) === textOf(forged),
          `${textOf(followed)} | ${textOf(forged)}`,
        );
      } finally {
        await alice.close();
        await bob.close();
      }
    }
  } finally {
    child.kill();
  }
}

async function main() {
  const at = process.argv.indexOf('--server');
  const server = at > 0 ? process.argv[at + 1] : process.env.MCP_SUPPORT_DESK || defaultServer();
  const checks = new Checks();
  if (!existsSync(server)) {
    checks.check('server binary exists', false, `${server} not found: run \`cargo build --example mcp_support_desk --all-features\``);
  } else {
    console.log(`     server ${server}; ${SDKS.map((s) => s.label).join(', ')}; js-tiktoken ${version('js-tiktoken')} (o200k_base)`);
    let schemas = {};
    const answers = [];
    for (const sdk of SDKS) {
      for (const who of PROFILES) {
        const got = await profileScenario(sdk, server, who, checks);
        if (Object.keys(got.schemas).length > 0) schemas = got.schemas;
        answers.push(...got.answers);
      }
    }
    validatorMatrix(schemas, answers, checks);
    await principalsScenario(server, checks);
  }
  console.log(`interop-ts: ${checks.passed} passed, ${checks.failed} failed`);
  process.exitCode = checks.failed > 0 || checks.passed === 0 ? 1 : 0;
}

await main();
