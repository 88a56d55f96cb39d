#!/usr/bin/env python3
"""Interop test: the official MCP Python SDK (`mcp` on PyPI) against the shape example server
`examples/mcp_support_desk.rs`, over stdio.

It starts the server, lists its tools, checks that every tool with structured output declares
an `outputSchema` and that every `structuredContent` it gets validates against it
(`jsonschema`, in the draft the schema declares, as the SDK itself validates), pages
`search_tickets` to the end (no duplicates, nothing skipped, the count equals the
database's), reopens a stored result by its handle, sends a tampered cursor, and reads the
server's log (stderr) for the SQL statements each page cost. Then it connects once under
each client name of a channel profile and pages the whole search again by the `next` that
profile's model reads; answers made wrong on purpose (a wrong type at each row position, a
row one value too long or too short, an object with a wrong, extra or missing field) must
fail validation. Last, over streamable HTTP with a bearer token per principal
(`SHAPE_TOKENS`): no token or a wrong one is refused, and one principal's handle and cursor
read for the other exactly as ones that never existed. `tests/mcp_interop_ts/` does the same
with the TypeScript SDK.

Run by hand (the README's test section):

    python3 -m venv .venv && .venv/bin/pip install -r tests/requirements.txt
    cargo build --example mcp_support_desk --features mcp
    .venv/bin/python tests/mcp_interop.py [--server PATH]

The last line is `mcp interop: N passed, M failed`; the exit code is 1 when anything failed.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import re
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.validators import validator_for
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import Implementation

ROOT = Path(__file__).resolve().parent.parent
# What the server seeds (examples/common/desk_db.rs): the counts the pages must add up to.
DB_TICKETS = 5_000
STATUS_WORDS = ["new", "pending", "open", "resolved", "closed"]
TOOLS = {"search_tickets", "get_ticket", "open_result"}
SIZE_HINT_KEY = "anthropic/maxResultSizeChars"
CALL_TIMEOUT_S = 30.0
TOTAL_TIMEOUT_S = 600.0
MAX_PAGES = 1_000  # far above the 200 a 5,000-ticket walk at 25 a page takes
# The main scenario's client name: one no table knows, so the server answers in both channels.
MAIN_CLIENT = "shape-interop-test"
# Channel profiles by the name a client sends at initialize (the README's client table):
# structured readers get the envelope alone, text readers the prose alone, without an
# outputSchema; the Python SDK's own default name, `mcp`, is what the text readers send.
PROFILE_CLIENTS = [
    ("claude-code", "structured"),
    ("codex-mcp-client", "structured"),
    ("Visual Studio Code", "structured"),
    ("open-webui", "text"),
    ("langchain-mcp-adapters", "text"),
    ("mcp", "text"),
    ("an-agent-nobody-knows", "both"),
]


def validator(schema: dict[str, Any]) -> Any:
    """The validator the MCP Python SDK builds for an outputSchema (`mcp.client.session`): the
    draft the schema's `$schema` declares (2020-12 when it declares none), after checking the
    schema against that draft's meta-schema (raises `jsonschema.SchemaError`)."""
    cls = validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def default_server() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    if not target.is_absolute():
        target = ROOT / target
    return target / "debug" / "examples" / "mcp_support_desk"


class Checks:
    """Named checks; each failure is reported with its message, none stops the run."""

    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        if ok:
            self.passed += 1
            print(f"ok   {name}")
        else:
            self.failed += 1
            print(f"FAIL {name}: {detail}")
        return ok


class Session:
    """The client, the tools' schemas, and a record of every call's structured content."""

    def __init__(self, client: Client, checks: Checks) -> None:
        self.client = client
        self.checks = checks
        self.schemas: dict[str, Any] = {}  # a validator per tool
        self.hints: dict[str, int] = {}
        self.validated = 0
        self.invalid: list[str] = []
        self.calls = 0

    async def call(self, tool: str, args: dict[str, Any]) -> tuple[Any, dict[str, Any], str]:
        """Calls `tool`; returns (result, structuredContent, text) after validating the
        structured content against the tool's declared schema."""
        self.calls += 1
        result = await asyncio.wait_for(self.client.call_tool(tool, args), CALL_TIMEOUT_S)
        texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
        text = texts[0] if len(texts) == 1 else ""
        structured = result.structured_content
        schema = self.schemas.get(tool)
        if schema is None or structured is None:
            self.invalid.append(f"{tool}({args}): no schema or no structuredContent")
        else:
            errors = sorted(schema.iter_errors(structured), key=str)
            if errors:
                self.invalid.append(f"{tool}({args}): {errors[0].message}")
            else:
                self.validated += 1
        hint = self.hints.get(tool)
        if hint is not None and len(text) > hint:
            self.invalid.append(f"{tool}({args}): text of {len(text)} chars over the hint {hint}")
        return result, structured or {}, text


def records_of(envelope: dict[str, Any]) -> list[dict[str, Any]]:
    """The records of an envelope in either form: `data` of objects, or `fields` zipped with
    each array in `data` (the rows form a structured-only client gets)."""
    if "fields" in envelope:
        fields = envelope["fields"]
        return [dict(zip(fields, row)) for row in envelope.get("data", [])]
    return list(envelope.get("data", []))


def ids_of(envelope: dict[str, Any]) -> list[str]:
    return [record["id"] for record in records_of(envelope)]


async def walk(session: Session, args: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Pages `search_tickets` with `args` to the end; returns (records, envelopes)."""
    records: list[dict[str, Any]] = []
    envelopes: list[dict[str, Any]] = []
    cursor = None
    for _ in range(MAX_PAGES):
        page_args = dict(args)
        if cursor is not None:
            page_args["cursor"] = cursor
        result, env, _ = await session.call("search_tickets", page_args)
        if result.is_error:
            raise AssertionError(f"page {len(envelopes) + 1} of {args} is an error: {env.get('summary')}")
        envelopes.append(env)
        records.extend(records_of(env))
        cursor = env.get("next")
        if cursor is None:
            return records, envelopes
    raise AssertionError(f"{args}: still a next cursor after {MAX_PAGES} pages")


def total_of(env: dict[str, Any]) -> int:
    """The whole match, from the first page: shown + omitted."""
    return len(records_of(env)) + int(env.get("omitted", {}).get("count", 0))


def tamper(cursor: str) -> str:
    i = len(cursor) // 2
    swap = "A" if cursor[i] != "A" else "B"
    return cursor[:i] + swap + cursor[i + 1 :]


async def run(server: Path, log_path: Path, checks: Checks) -> None:
    params = StdioServerParameters(command=str(server), args=[], env={**os.environ, "RUST_LOG": "info"})
    hello = Implementation(name=MAIN_CLIENT, version="1.0")
    with open(log_path, "w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=CALL_TIMEOUT_S, client_info=hello) as client:
            session = Session(client, checks)
            await scenario(session, checks)
    sql_checks(log_path, checks)
    session_checks(log_path, checks)
    counts: dict[str, int] = {}
    seen: dict[str, Any] = {}
    for name, profile in PROFILE_CLIENTS:
        profile_log = log_path.with_suffix(f".{len(counts)}.log")
        with open(profile_log, "w", encoding="utf-8") as errlog:
            hello = Implementation(name=name, version="1.0")
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=CALL_TIMEOUT_S, client_info=hello) as client:
                counts[name] = await profile_scenario(client, name, profile, checks, seen)
        first_page_figures(profile_log, name, profile)
    wrong_answer_checks(seen, checks)
    await principals(server, checks)
    await readme_server(server.parent / "mcp_minimal", checks)
    print("     first page's tickets by client: " + ", ".join(f"{n} {c}" for n, c in counts.items()))
    both = counts["an-agent-nobody-knows"]
    checks.check(
        "a text reader's first page shows at least as many tickets as under both channels",
        all(counts[n] >= both for n, p in PROFILE_CLIENTS if p == "text"),
        str(counts),
    )


# Two principals and their bearer tokens, as the server takes them (`SHAPE_TOKENS`).
PRINCIPALS = {"alice": "py-interop-alice-token-3c8e1f40", "bob": "py-interop-bob-token-7a05d2b9"}


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def principals(server: Path, checks: Checks) -> None:
    """The server over streamable HTTP with a bearer token per principal (issue 50), through
    the SDK's own HTTP client: no token or a wrong one is refused with the server's reason;
    Alice's handle and cursor work for her, and read for Bob exactly as a handle never issued
    and a cursor altered."""
    import subprocess

    port = free_port()
    env = {**os.environ, "RUST_LOG": "error", "SHAPE_TOKENS": ",".join(f"{p}={t}" for p, t in PRINCIPALS.items())}
    child = subprocess.Popen([str(server), "--http", f"127.0.0.1:{port}"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        import socket

        for _ in range(600):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            await asyncio.sleep(0.1)
        hello = Implementation(name="claude-code", version="1.0")

        def connect(token: str | None) -> Client:
            headers = {"Authorization": f"Bearer {token}"} if token else None
            return Client(streamable_http_client(url, http_client=create_mcp_http_client(headers=headers)), read_timeout_seconds=CALL_TIMEOUT_S, client_info=hello)

        # The SDK turns the 401 into "Server returned an error response" (the server's
        # reason, in the body, is not shown); what is checked is that nothing is served.
        for token, what in [(None, "no token"), ("a-token-nobody-was-given-01", "a wrong token")]:
            refused = ""
            try:
                async with connect(token) as client:
                    await asyncio.wait_for(client.list_tools(), CALL_TIMEOUT_S)
            except BaseException as e:  # noqa: BLE001 - the refusal, whatever the SDK wraps it in
                if isinstance(e, KeyboardInterrupt):
                    raise
                refused = "".join(traceback.format_exception(type(e), e, e.__traceback__))
            checks.check(f"over HTTP, {what}: refused before any tool is listed", "error response" in refused, refused[-300:] or "it connected and listed the tools")
        async with connect(PRINCIPALS["alice"]) as alice, connect(PRINCIPALS["bob"]) as bob:
            call = lambda client, tool, args: asyncio.wait_for(client.call_tool(tool, args), CALL_TIMEOUT_S)  # noqa: E731
            first = await call(alice, "search_tickets", {})
            env_first = first.structured_content or {}
            handle = env_first.get("omitted", {}).get("handle")
            cursor = env_first.get("next")
            if not checks.check("over HTTP: Alice's search stores its result and gives a cursor", isinstance(handle, str) and isinstance(cursor, str), json.dumps(env_first)[:300]):
                return
            opened = await call(alice, "open_result", {"handle": handle, "page_size": 5})
            checks.check("over HTTP: Alice opens her handle", not opened.is_error, text_of(opened)[:300])
            second = await call(alice, "search_tickets", {"cursor": cursor})
            checks.check("over HTTP: Alice follows her cursor", not second.is_error, text_of(second)[:300])
            made_up = re.sub(r"[0-9]", lambda m: str((int(m.group()) + 1) % 10), handle)
            taken = await call(bob, "open_result", {"handle": handle, "page_size": 5})
            never = await call(bob, "open_result", {"handle": made_up, "page_size": 5})
            checks.check(
                "over HTTP: Bob's reading of Alice's handle is his reading of one never issued",
                taken.is_error and text_of(taken).replace(handle, "H") == text_of(never).replace(made_up, "H"),
                f"{text_of(taken)[:200]} | {text_of(never)[:200]}",
            )
            last = cursor[-1]
            altered = cursor[:-1] + (str(int(last) - 1) if last > "0" else "1")
            followed = await call(bob, "search_tickets", {"cursor": cursor})
            forged = await call(bob, "search_tickets", {"cursor": altered})
            checks.check(
                "over HTTP: Bob's reading of Alice's cursor is his reading of it altered",
                followed.is_error and text_of(followed) == text_of(forged),
                f"{text_of(followed)[:200]} | {text_of(forged)[:200]}",
            )
    finally:
        child.kill()
        child.wait()


async def readme_server(server: Path, checks: Checks) -> None:
    """The README's whole MCP server (`examples/mcp_minimal.rs`), as a user copies it: under
    every profile's client name it lists its one tool with the schema the profile implies, and
    a walk of `next` shows each of its 120 tickets exactly once (the SDK validating every
    `structuredContent` against the tool's `outputSchema`)."""
    if not checks.check("the README's server is built", server.is_file(), f"{server}: run `cargo build --example mcp_minimal --features mcp`"):
        return
    params = StdioServerParameters(command=str(server), args=[], env=dict(os.environ))
    expected = {f"tkt_{i:04}" for i in range(1, 121)}
    for name, profile in PROFILE_CLIENTS:
        hello = Implementation(name=name, version="1.0")
        with open(os.devnull, "w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=CALL_TIMEOUT_S, client_info=hello) as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                checks.check(
                    f"README server, {name}: search_tickets and open_result, each with an output schema exactly when the model reads structuredContent",
                    sorted(tools) == ["open_result", "search_tickets"]
                    and all((t.output_schema is None) == (profile == "text") for t in tools.values()),
                    str([(t.name, t.output_schema is not None) for t in tools.values()]),
                )
                ids, pages, problems = await walk_as(client, profile)
                # The first page stored the whole result: its handle, as the model reads it
                # (the envelope's `omitted.handle`, or `handle=` in the prose), reopens it.
                first = await asyncio.wait_for(client.call_tool("search_tickets", {}), CALL_TIMEOUT_S)
                first_text = " ".join(c.text for c in first.content if getattr(c, "type", None) == "text")
                env = first.structured_content or {}
                handle = env.get("omitted", {}).get("handle")
                if handle is None:
                    found = re.search(r"handle=(h_[0-9A-Za-z]+)", first_text)
                    handle = found.group(1) if found else None
                counted = ""
                if handle is not None:
                    opened = await asyncio.wait_for(
                        client.call_tool("open_result", {"handle": handle, "aggregate": {"count_by": "status"}, "page_size": 1}),
                        CALL_TIMEOUT_S,
                    )
                    counted = (opened.structured_content or {}).get("summary") or " ".join(
                        c.text for c in opened.content if getattr(c, "type", None) == "text"
                    )
                checks.check(
                    f"README server, {name}: open_result reopens the stored result (every ticket counted by status)",
                    handle is not None and "closed 40, open 40, pending 40" in counted,
                    f"handle {handle}; {counted[:200]}",
                )
        checks.check(
            f"README server, {name} ({profile}): every ticket once over {pages} pages",
            not problems and len(ids) == len(set(ids)) and set(ids) == expected,
            f"{len(ids)} ids, {len(set(ids))} distinct, {len(expected - set(ids))} missing; {problems[:3]}",
        )


def first_page_figures(log_path: Path, name: str, profile: str) -> None:
    """Prints what the first `search_tickets` page cost the channel(s) this client's model
    reads (o200k_base, from the server's log): envelope and total tokens, cursor length."""
    pages = [c for c in log_calls(log_path) if c.get("tool") == "search_tickets" and c.get("status") == "partial"]
    if not pages:
        print(f"     {name} ({profile}): no first page logged")
        return
    p = pages[0]
    parts = []
    if profile != "structured":
        parts.append(f"text {p['envelope_text_tokens']} envelope / {p['text_tokens']} total")
    if profile != "text":
        parts.append(f"structured {p['envelope_structured_tokens']} envelope / {p['structured_tokens']} total")
    print(f"     first page for {name} ({profile}, {p['shown']} tickets): " + "; ".join(parts) + f"; cursor {p['cursor_chars']} chars")


def prose_record_lines(text: str) -> list[str]:
    """A prose answer's record lines, read from the text: after the head, up to `omitted:`;
    a complete answer has no `omitted:` or `next:` line, its records run to its end."""
    lines = text.splitlines()
    end = next((i for i, line in enumerate(lines) if line.startswith("omitted: ")), len(lines))
    return lines[1:end]


def prose_records(text: str) -> int:
    """Records in a prose answer, read from the text."""
    return len(prose_record_lines(text))


async def walk_as(client: Client, profile: str) -> tuple[list[str], int, list[str]]:
    """Pages `search_tickets` to the end as a client of `profile` reads it: the envelope's
    records and `next`, or, for a text reader, the prose's record lines and the cursor on its
    `next:` line. The SDK validates each `structuredContent` itself (`call_tool` raises when
    one does not match). Returns (ids, pages, problems)."""
    ids: list[str] = []
    problems: list[str] = []
    cursor = None
    for page in range(1, MAX_PAGES + 1):
        args = {} if cursor is None else {"cursor": cursor}
        result = await asyncio.wait_for(client.call_tool("search_tickets", args), CALL_TIMEOUT_S)
        texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
        text = texts[0] if len(texts) == 1 else ""
        if result.is_error:
            problems.append(f"page {page} is an error: {text[:160]}")
            return ids, page, problems
        if profile == "text":
            ids.extend(line.split(" ", 1)[0] for line in prose_record_lines(text))
            found = re.search(r"^next: .*cursor=(\S+)", text, re.M)
            cursor = found.group(1) if found else None
            if result.structured_content is not None:
                problems.append(f"page {page}: structuredContent for a text reader")
        else:
            env = result.structured_content or {}
            if ("fields" in env) != (profile == "structured"):
                problems.append(f"page {page}: not the {'rows' if profile == 'structured' else 'objects'} form")
            ids.extend(ids_of(env))
            cursor = env.get("next")
        if cursor is None:
            return ids, page, problems
    problems.append(f"still a next cursor after {MAX_PAGES} pages")
    return ids, MAX_PAGES, problems


def wrong_answers(rows: dict[str, Any] | None, objects: dict[str, Any] | None) -> list[tuple[str, dict[str, Any]]]:
    """Real answers made wrong on purpose, each with what is wrong (as the TypeScript interop
    makes them): a value of no field's type at each row position, a status word no legend has,
    a row one value too long and one too short, `fields` in another order; an object with a
    wrong type, a field the projection leaves out, a field missing; a row without `fields`."""
    wrong: list[tuple[str, dict[str, Any]]] = []
    if rows and rows.get("data"):
        fields = rows["fields"]
        for i, field in enumerate(fields):
            bad = copy.deepcopy(rows)
            bad["data"][0][i] = {"not": "a field value"}
            wrong.append((f"rows: an object at position {i} ({field})", bad))
        bad = copy.deepcopy(rows)
        bad["data"][0][fields.index("status")] = "sideways"
        wrong.append(("rows: a status the legend does not have", bad))
        bad = copy.deepcopy(rows)
        bad["data"][0].append(bad["data"][0][-1])
        wrong.append((f"rows: a row one value too long ({len(bad['data'][0])})", bad))
        bad = copy.deepcopy(rows)
        bad["data"][0].pop()
        wrong.append((f"rows: a row one value too short ({len(bad['data'][0])})", bad))
        bad = copy.deepcopy(rows)
        bad["fields"][0], bad["fields"][1] = bad["fields"][1], bad["fields"][0]
        wrong.append(("rows: fields in another order", bad))
    if objects and objects.get("data"):
        bad = copy.deepcopy(objects)
        bad["data"][0]["subject"] = 42
        wrong.append(("objects: a number as the subject", bad))
        bad = copy.deepcopy(objects)
        bad["data"][0]["sla_due_at"] = "2026-03-01"
        wrong.append(("objects: a field the projection leaves out", bad))
        bad = copy.deepcopy(objects)
        del bad["data"][0]["org"]
        wrong.append(("objects: a field missing", bad))
        bad = copy.deepcopy(objects)
        bad["data"][0] = list(bad["data"][0].values())
        wrong.append(("objects: a row without fields", bad))
    return wrong


def wrong_answer_checks(seen: dict[str, Any], checks: Checks) -> None:
    """The schema describes the rows exactly: the real first pages of both forms validate,
    every wrong answer fails, under the validator the SDK builds for it."""
    schema = seen.get("schema")
    if not checks.check("a rows and an objects first page were received, with the schema", schema is not None and "rows" in seen and "objects" in seen, str(sorted(seen))):
        return
    check = validator(schema)
    real = [e for form in ("rows", "objects") for e in check.iter_errors(seen[form])]
    checks.check(f"{type(check).__name__}: both real first pages validate", not real, str(real[:1]))
    wrong = wrong_answers(seen["rows"], seen["objects"])
    accepted = [what for what, env in wrong if check.is_valid(env)]
    checks.check(
        f"{type(check).__name__}: rejects all {len(wrong)} wrong answers (each row position's type, a row too long, too short, …)",
        len(wrong) >= 15 and not accepted,
        "; ".join(accepted) or f"only {len(wrong)} wrong answers made",
    )


async def profile_scenario(client: Client, name: str, profile: str, checks: Checks, seen: dict[str, Any]) -> int:
    """One session as the client `name`: tools/list, a first page, the page after it by the
    cursor the model would read, an error, and the whole search by the cursors the model
    reads. Keeps in `seen` the schema and a first page of each form. Returns the first page's
    record count."""
    listed = await asyncio.wait_for(client.list_tools(), CALL_TIMEOUT_S)
    schemas = [tool.output_schema is not None for tool in listed.tools]
    want_schema = profile != "text"
    checks.check(
        f"{name} ({profile}): tools/list {'declares' if want_schema else 'leaves out'} outputSchema",
        bool(schemas) and all(s == want_schema for s in schemas),
        str(schemas),
    )
    result = await asyncio.wait_for(client.call_tool("search_tickets", {}), CALL_TIMEOUT_S)
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    text = texts[0] if len(texts) == 1 else ""
    structured = result.structured_content
    shown = -1
    if profile == "text":
        shown = prose_records(text)
        cursor = re.search(r"cursor=(\S+)", text)
        checks.check(
            f"{name} (text): no structuredContent; the prose carries status, records and the cursor",
            structured is None and not result.is_error and text.startswith("partial: ") and shown > 0 and cursor is not None,
            text[:200],
        )
        if cursor is not None:
            nxt = await asyncio.wait_for(client.call_tool("search_tickets", {"cursor": cursor.group(1)}), CALL_TIMEOUT_S)
            nxt_text = nxt.content[0].text if nxt.content else ""
            checks.check(
                f"{name} (text): the cursor read from the prose continues the search",
                not nxt.is_error and nxt.structured_content is None and re.match(rf"partial: tickets {shown + 1}–", nxt_text) is not None,
                nxt_text[:200],
            )
    else:
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        is_json = profile == "structured"
        checks.check(
            f"{name} ({profile}): structuredContent, and the text block is {'the same JSON' if is_json else 'prose'}",
            isinstance(structured, dict) and not result.is_error and structured.get("status") == "partial"
            and ((parsed == structured) if is_json else (parsed is None and text.startswith("partial: "))),
            text[:200],
        )
        shown = len(records_of(structured or {}))
        schema = next((t.output_schema for t in listed.tools if t.name == "search_tickets"), None)
        errors = [] if schema is None or structured is None else list(validator(schema).iter_errors(structured))
        form = "rows" if is_json else "objects"
        if schema is not None and isinstance(structured, dict):
            seen.setdefault("schema", schema)
            seen.setdefault(form, structured)
        checks.check(
            f"{name} ({profile}): structuredContent in the {form} form, valid against outputSchema, "
            "naming its untrusted fields",
            schema is not None and not errors and ("fields" in (structured or {})) == is_json
            and isinstance((structured or {}).get("data"), list)
            and (structured or {}).get("untrusted") == ["subject"] and shown > 0,
            str(errors[:1]) if errors else str(sorted((structured or {}).keys())),
        )
    bad = await asyncio.wait_for(client.call_tool("search_tickets", {"cursor": "not a cursor"}), CALL_TIMEOUT_S)
    bad_text = bad.content[0].text if bad.content else ""
    checks.check(
        f"{name} ({profile}): an error's text alone carries the remedy",
        bool(bad.is_error) and bad_text.startswith("error: ") and "without a cursor" in bad_text
        and (bad.structured_content is None) == (profile == "text"),
        bad_text[:200],
    )
    ids, pages, problems = await walk_as(client, profile)
    checks.check(
        f"{name} ({profile}): the whole search by the next the model reads: {pages} pages, every ticket exactly once",
        not problems and len(ids) == len(set(ids)) == DB_TICKETS,
        "; ".join(problems[:3]) or f"{len(ids)} shown, {len(set(ids))} distinct of {DB_TICKETS}",
    )
    return shown


async def scenario(session: Session, checks: Checks) -> None:
    client = session.client

    # 1. tools/list: every tool declares its output schema and a size hint.
    listed = await asyncio.wait_for(client.list_tools(), CALL_TIMEOUT_S)
    tools = {tool.name: tool for tool in listed.tools}
    checks.check("tools/list names search_tickets, get_ticket, open_result", set(tools) == TOOLS, f"got {sorted(tools)}")
    for name, tool in sorted(tools.items()):
        schema = tool.output_schema
        ok = isinstance(schema, dict)
        detail = "no outputSchema"
        if ok:
            try:
                session.schemas[name] = validator(schema)
            except jsonschema.SchemaError as e:
                ok, detail = False, f"not a valid JSON Schema: {e.message}"
        dialect = type(session.schemas[name]).__name__ if name in session.schemas else "none"
        checks.check(f"{name} declares a valid outputSchema ({dialect})", ok, detail)
        hint = (tool.meta or {}).get(SIZE_HINT_KEY)
        if checks.check(f"{name} carries _meta[{SIZE_HINT_KEY}]", isinstance(hint, int) and hint > 0, f"got {hint!r}"):
            session.hints[name] = hint

    # 2. The first page: text channel for reading, envelope for structure, a handle, a cursor.
    result, first, text = await session.call("search_tickets", {})
    checks.check("first page is not an error", not result.is_error, first.get("summary", ""))
    checks.check(
        "first page: status partial, at most 25 tickets, a next cursor",
        first.get("status") == "partial" and 0 < len(records_of(first)) <= 25 and isinstance(first.get("next"), str),
        json.dumps({k: first.get(k) for k in ("status", "next")})[:200],
    )
    try:
        json.loads(text)
        text_is_json = True
    except ValueError:
        text_is_json = False
    checks.check(
        "content is the text channel (prose, not compact JSON) and carries the summary and the cursor",
        not text_is_json and text.startswith("partial: ") and first.get("next", "") in text,
        text[:200],
    )
    checks.check(
        "first page counts the whole database",
        total_of(first) == DB_TICKETS,
        f"shown + omitted = {total_of(first)}, the database has {DB_TICKETS}",
    )
    handle = first.get("omitted", {}).get("handle")
    checks.check("broad first page stores the whole result behind a handle", isinstance(handle, str) and handle.startswith("h_"), f"omitted = {first.get('omitted')}")
    print(f"     first page: {len(records_of(first))} tickets, {len(text)} chars of text; summary: {first.get('summary', '')[:160]}")

    # 3. Page every ticket: no duplicates, nothing skipped, newest update first throughout.
    started = time.monotonic()
    records, envelopes = await walk(session, {})
    ids = [r["id"] for r in records]
    checks.check(
        f"paging all tickets: {len(envelopes)} pages, {len(ids)} tickets, no duplicates",
        len(ids) == len(set(ids)),
        f"{len(ids) - len(set(ids))} duplicates",
    )
    checks.check("paging all tickets: count equals the database's", len(set(ids)) == DB_TICKETS, f"{len(set(ids))} != {DB_TICKETS}")
    updates = [r["last_update"] for r in records]
    checks.check("paging all tickets: newest update first across pages", updates == sorted(updates, reverse=True), "order broken")
    checks.check(
        "paging all tickets: every page but the last is partial, the last ok",
        all(e.get("status") == "partial" for e in envelopes[:-1]) and envelopes[-1].get("status") == "ok" or
        all(e.get("status") == "partial" for e in envelopes),
        str([e.get("status") for e in envelopes[-3:]]),
    )
    print(f"     walked {len(envelopes)} pages in {time.monotonic() - started:.1f}s")

    # 4. Filters: status and a subject substring, paged to the end; the statuses add up.
    by_status = {}
    for word in STATUS_WORDS:
        _, env, _ = await session.call("search_tickets", {"status": word})
        by_status[word] = total_of(env) if env.get("status") != "empty" else 0
    checks.check("status totals add up to the database's", sum(by_status.values()) == DB_TICKETS, str(by_status))
    records, envelopes = await walk(session, {"status": "open", "query": "refund"})
    fids = [r["id"] for r in records]
    expected = total_of(envelopes[0]) if envelopes[0].get("status") != "empty" else 0
    checks.check(
        f"status=open query=refund: {len(fids)} tickets over {len(envelopes)} pages, no duplicates, none skipped",
        len(fids) == len(set(fids)) == expected and expected > 0,
        f"{len(fids)} seen, {len(set(fids))} distinct, {expected} reported",
    )
    checks.check(
        "status=open query=refund: every ticket matches",
        all(r["status"] == "open" and "refund" in r["subject"].lower() for r in records),
        str([r for r in records if r["status"] != "open" or "refund" not in r["subject"].lower()][:2]),
    )
    for wildcard in ("%", "_"):
        result, env, _ = await session.call("search_tickets", {"query": wildcard})
        checks.check(f"query {wildcard!r} is literal, not a LIKE wildcard: empty", not result.is_error and env.get("status") == "empty", env.get("summary", ""))

    # 5. Bad input: clear error envelopes.
    result, env, text = await session.call("search_tickets", {"status": "bogus"})
    checks.check(
        "unknown status: isError, names the valid words",
        bool(result.is_error) and env.get("status") == "error" and all(w in text for w in STATUS_WORDS),
        text[:200],
    )

    # 6. get_ticket takes the short id the results show.
    short = ids_of(first)[0]
    result, env, _ = await session.call("get_ticket", {"id": short})
    checks.check(f"get_ticket({short}) returns that ticket", not result.is_error and ids_of(env) == [short], env.get("summary", ""))
    result, env, _ = await session.call("get_ticket", {"id": short.upper().replace("TKT_", "tkt_")})
    checks.check("get_ticket accepts the short id in upper case", not result.is_error and ids_of(env) == [short], env.get("summary", ""))
    prefixes: dict[str, list[str]] = {}
    for tid in ids:
        prefixes.setdefault(tid[: len("tkt_") + 4], []).append(tid)
    shared = next((p for p, group in sorted(prefixes.items()) if len(group) > 1), None)
    if shared is not None:
        result, env, text = await session.call("get_ticket", {"id": shared})
        checks.check(f"get_ticket({shared}), a prefix of {len(prefixes[shared])} ids: isError, says ambiguous", bool(result.is_error) and "ambiguous" in text, text[:200])
    result, env, text = await session.call("get_ticket", {"id": "'; DROP TABLE tickets; --"})
    checks.check("get_ticket with a malformed id: isError, says what an id looks like", bool(result.is_error) and "tkt_" in text, text[:200])
    unknown = "tkt_" + ("0" * 8 if "tkt_00000000" not in ids else "f" * 8)
    result, env, _ = await session.call("get_ticket", {"id": unknown})
    checks.check(f"get_ticket({unknown}) that no ticket has: empty, not an error", not result.is_error and env.get("status") == "empty", env.get("summary", ""))

    # 7. The handle: reopen the stored result, filter and page it; another handle is refused.
    if isinstance(handle, str):
        args = {"handle": handle, "filter": [{"field": "status", "op": "equals", "value": "open"}], "page_size": 5}
        result, env, text = await session.call("open_result", args)
        data = records_of(env)
        checks.check(
            "open_result reopens the handle: 5 open tickets, a cursor for more",
            not result.is_error and len(data) == 5 and all(r.get("status") == "open" for r in data) and isinstance(env.get("next"), str),
            env.get("summary", "")[:200],
        )
        reopened_total = total_of(env)
        checks.check("open_result's open tickets equal search_tickets(status=open)", reopened_total == by_status["open"], f"{reopened_total} != {by_status['open']}")
        if isinstance(env.get("next"), str):
            result, env2, _ = await session.call("open_result", {**args, "cursor": env["next"]})
            checks.check(
                "open_result pages on with its cursor: the next 5, no overlap",
                not result.is_error and len(records_of(env2)) == 5 and not set(ids_of(env2)) & set(ids_of(env)),
                env2.get("summary", "")[:200],
            )
        result, env, text = await session.call("open_result", {"handle": handle, "aggregate": {"count_by": "status"}, "page_size": 1})
        checks.check("open_result aggregates the stored result", not result.is_error and "open" in env.get("summary", ""), text[:200])
        forged = handle[:-2] + ("AA" if not handle.endswith("AA") else "BB")
        result, env, text = await session.call("open_result", {"handle": forged})
        checks.check("open_result with an unknown handle: isError", bool(result.is_error), text[:200])

    # 8. A tampered cursor: isError with the recovery in the text; a cursor of another query too.
    cursor = first.get("next")
    if isinstance(cursor, str):
        result, env, text = await session.call("search_tickets", {"cursor": tamper(cursor)})
        checks.check(
            "tampered cursor: isError, says to call again without a cursor",
            bool(result.is_error) and env.get("status") == "error" and "without a cursor" in text,
            text[:200],
        )
        result, env, text = await session.call("search_tickets", {"status": "open", "cursor": cursor})
        checks.check("cursor of another query: isError, says so", bool(result.is_error) and "different query" in text, text[:200])
        result, env, text = await session.call("search_tickets", {"cursor": "not a cursor"})
        checks.check("garbage cursor: isError", bool(result.is_error) and "without a cursor" in text, text[:200])

    # 9. Every structuredContent validated against its tool's outputSchema (the SDK checks
    # successful calls too; this covers errors as well).
    checks.check(
        f"every structuredContent of {session.calls} calls validates against its outputSchema and fits the size hint",
        not session.invalid and session.validated == session.calls,
        "; ".join(session.invalid[:3]),
    )


FIELD = re.compile(r'(\w+)=("[^"]*"|\[.*?\]|\S+)')


def log_calls(log_path: Path) -> list[dict[str, Any]]:
    """The server's per-call lines (target mcp_support_desk, message `call`) as dicts."""
    calls = []
    for line in log_path.read_text(encoding="utf-8", errors="replace").splitlines():
        if "mcp_support_desk" not in line or "sql_queries=" not in line:
            continue
        fields = {k: v.strip('"') for k, v in FIELD.findall(line)}
        try:
            fields["resolvers"] = json.loads(fields.get("resolvers", "[]"))
            for key in ("sql_queries", "shown", "total", "text_tokens", "structured_tokens"):
                fields[key] = int(fields[key])
            for key in ("envelope_text_tokens", "envelope_structured_tokens", "cursor_chars"):
                fields[key] = int(fields.get(key, -1))
        except (ValueError, KeyError):
            continue
        calls.append(fields)
    return calls


def sql_checks(log_path: Path, checks: Checks) -> None:
    """Reads the server's per-call log lines (stderr): SQL statements and resolver calls."""
    calls = log_calls(log_path)
    pages = [c for c in calls if c.get("tool") == "search_tickets" and c.get("status") in ("ok", "partial")]
    if not checks.check("the server logged its search pages on stderr", len(pages) > 100, f"{len(pages)} lines found"):
        tail = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-5:]
        print("     server log (last lines):\n       " + "\n       ".join(tail))
    if not pages:
        return
    first = pages[0]
    print(
        f"     first search_tickets page: {first['shown']} of {first['total']} tickets, "
        f"{first['text_tokens']} tokens of text, {first['structured_tokens']} structured (o200k_base), "
        f"{first['sql_queries']} SQL statements"
    )
    over = [p for p in pages if p["sql_queries"] > 4 or any(r["calls"] > 1 for r in p["resolvers"])]
    checks.check(
        "every search page: at most 4 SQL statements (count, page, users, organizations), one call per resolver",
        not over,
        str(over[:2]),
    )
    counts = [p["sql_queries"] for p in pages]
    typical = max(set(counts), key=counts.count)
    print(f"     SQL statements per search page: {typical} (most common over {len(pages)} pages)")


def session_checks(log_path: Path, checks: Checks) -> None:
    """Reads the server's per-session lines: each page asked for with the cursor of the one
    before is a hedge (`search_tickets.next more records`); no id was left to look up."""
    lines = [l for l in log_path.read_text(encoding="utf-8", errors="replace").splitlines() if "mcp_support_desk" in l and " session=" in l]
    last = lines[-1] if lines else ""
    more = re.search(r"search_tickets\.next more records (\d+)", last)
    checks.check(
        "the server's per-session log counts follow-up lookups (none) and cursor hedges (each page after the first)",
        bool(more) and int(more.group(1)) > 100 and "; 0 follow-up calls (none);" in last,
        last[-300:],
    )
    if last:
        print("     session: " + last.split(" session=", 1)[1][:300])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", type=Path, default=Path(os.environ.get("MCP_SUPPORT_DESK") or default_server()))
    opts = parser.parse_args()
    checks = Checks()
    if not opts.server.is_file():
        checks.check("server binary exists", False, f"{opts.server} not found: run `cargo build --example mcp_support_desk --features mcp`")
    else:
        with tempfile.TemporaryDirectory() as tmp:
            log_path = Path(tmp) / "server.log"
            try:
                asyncio.run(asyncio.wait_for(run(opts.server, log_path, checks), TOTAL_TIMEOUT_S))
            except BaseException as e:  # noqa: BLE001 - any failure is a failed check, with its cause
                if isinstance(e, KeyboardInterrupt):
                    raise
                detail = "".join(traceback.format_exception_only(type(e), e)).strip()
                checks.check("the session ran to the end", False, detail)
                if log_path.exists():
                    tail = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
                    print("     server log (last lines):\n       " + "\n       ".join(tail))
    print(f"mcp interop: {checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed or not checks.passed else 0


if __name__ == "__main__":
    sys.exit(main())
