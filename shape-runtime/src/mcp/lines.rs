//! A line transport for an MCP server that answers every request it cannot read
//! ([`guarded`]), and the scan that finds a line's depth and id without parsing it whole.

use rmcp::RoleServer;
use rmcp::model::{ErrorData, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::{AsyncRwTransport, DEFAULT_MAX_LINE_LENGTH};
use serde_json::json;
use std::future::Future;
use std::pin::Pin;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};

/// The deepest nesting of arrays and objects a message may have: serde_json's recursion
/// limit (128 levels refused, 127 read). The message object itself is the first level, so a
/// `tools/call`'s `arguments` object is the third.
pub const MAX_DEPTH: usize = 127;

/// How much of an over-long line is kept to find its id in.
const HEAD_KEPT: usize = 64 * 1024;

/// An error answer being written, kept across a cancelled `receive`.
type Sending = Pin<Box<dyn Future<Output = Result<(), std::io::Error>> + Send>>;

/// rmcp's line transport with every unreadable request answered: see [`guarded`], which
/// makes it.
pub struct Guarded<R, W: AsyncWrite> {
    read: BufReader<R>,
    /// The line being read (kept across a cancelled `receive`).
    line: Vec<u8>,
    /// The start of an over-long line, and how many bytes it had in all.
    head: Option<(Vec<u8>, usize)>,
    max_line_length: usize,
    /// rmcp's transport, for writing only (its reader is empty).
    write: AsyncRwTransport<RoleServer, tokio::io::Empty, W>,
    sending: Option<Sending>,
}

/// `(read, write)` (what `rmcp::transport::stdio()` returns) as a server transport that
/// answers every request it cannot read, for `server.serve(mcp::guarded(stdio()))`.
///
/// rmcp's stdio transport (`AsyncRwTransport`, what `serve(rmcp::transport::stdio())` runs)
/// reads one JSON-RPC message a line and parses it with serde_json. A line serde_json
/// refuses as a syntax error is dropped without a word: that includes a well-formed request
/// nested deeper than serde_json's recursion limit (a `tools/call` whose `arguments` nest
/// about 125 levels), so the client waits out its timeout, the server still up. A line over
/// the length limit (16 MiB) is dropped the same way. [`Guarded`] reads the lines itself and
/// answers each request it cannot read with a JSON-RPC error that says what was wrong, with
/// the request's id whenever the line shows one:
///
/// | the line | the answer |
/// |---|---|
/// | nested more than [`MAX_DEPTH`] levels deep | `-32600`, "the message nests N levels deep, more than the 127 …", with the id |
/// | over the length limit | `-32600`, "the message is N bytes, over …", with the id if the line's first 64 KiB show it |
/// | not JSON | `-32700`, "the message is not valid JSON (…)", with the id if the line shows one |
/// | JSON, not a JSON-RPC request | `-32600`, "the message is not a JSON-RPC message this server reads (…)", with the id if it has one |
///
/// A notification (a `method` and no `id`) and a response (a `result` or an `error`, no
/// `method`) are never answered, as JSON-RPC requires; they are logged. Every other line goes
/// to rmcp as its own transport would pass it. Writing is rmcp's own: the answers and the
/// errors share one writer.
///
/// ```no_run
/// # use rmcp::{ServerHandler, ServiceExt};
/// # use tokio::io::{AsyncRead, AsyncWrite};
/// # #[derive(Clone)] struct Desk;
/// # impl ServerHandler for Desk {}
/// # async fn run<R, W>(stdio: (R, W)) -> Result<(), Box<dyn std::error::Error>>
/// # where R: AsyncRead + Send + Unpin + 'static, W: AsyncWrite + Send + Unpin + 'static {
/// // `stdio` is `rmcp::transport::stdio()` (rmcp's feature `transport-io`).
/// let service = Desk.serve(toolshape::mcp::guarded(stdio)).await?;
/// service.waiting().await?;
/// # Ok(()) }
/// ```
pub fn guarded<R, W>((read, write): (R, W)) -> Guarded<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    Guarded {
        read: BufReader::new(read),
        line: Vec::new(),
        head: None,
        max_line_length: DEFAULT_MAX_LINE_LENGTH,
        write: AsyncRwTransport::new_server(tokio::io::empty(), write),
        sending: None,
    }
}

impl<R, W: AsyncWrite> Guarded<R, W> {
    /// The longest message read, in bytes without its newline (rmcp's default line length,
    /// 16 MiB, unless set); a longer one is answered as too long, never buffered whole.
    pub fn with_max_line_length(mut self, bytes: usize) -> Self {
        self.max_line_length = bytes;
        self
    }
}

/// Outcome of reading one line.
enum Line {
    /// A whole line is in `line`.
    Read,
    /// The line was over the limit: its head is in `head`.
    TooLong,
    /// The peer closed the stream (or it failed).
    End,
}

impl<R, W> Guarded<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// Reads one line into `self.line` (or, past the limit, its head into `self.head`).
    /// Cancel-safe: what was read stays in `self` for the next call.
    async fn read_line(&mut self) -> Line {
        loop {
            let (used, ended) = {
                let available = match self.read.fill_buf().await {
                    Ok(available) => available,
                    Err(e) => {
                        tracing::error!(target: "shape", "reading the MCP stream failed: {e}");
                        return Line::End;
                    }
                };
                if available.is_empty() {
                    return Line::End;
                }
                let newline = available.iter().position(|&b| b == b'\n');
                let take = newline.map_or(available.len(), |at| at + 1);
                let piece = &available[..take];
                match &mut self.head {
                    Some((head, total)) => {
                        let room = HEAD_KEPT.saturating_sub(head.len());
                        head.extend_from_slice(&piece[..room.min(piece.len())]);
                        *total = total.saturating_add(take);
                    }
                    // The limit is on the message: its bytes without the newline.
                    None if self
                        .line
                        .len()
                        .saturating_add(take - usize::from(newline.is_some()))
                        > self.max_line_length =>
                    {
                        let mut head = std::mem::take(&mut self.line);
                        let total = head.len().saturating_add(take);
                        head.truncate(HEAD_KEPT);
                        let room = HEAD_KEPT.saturating_sub(head.len());
                        head.extend_from_slice(&piece[..room.min(piece.len())]);
                        self.head = Some((head, total));
                    }
                    None => self.line.extend_from_slice(piece),
                }
                (take, newline.is_some())
            };
            self.read.consume(used);
            if ended {
                return if self.head.is_some() {
                    Line::TooLong
                } else {
                    Line::Read
                };
            }
        }
    }

    /// Starts writing an error answer; `receive` finishes it before reading on.
    fn answer(&mut self, error: ErrorData, id: Option<RequestId>) {
        tracing::warn!(
            target: "shape",
            code = error.code.0,
            id = ?id,
            "answering an MCP message that could not be read: {}",
            error.message
        );
        let send = self
            .write
            .send(TxJsonRpcMessage::<RoleServer>::error(error, id));
        self.sending = Some(Box::pin(send));
    }

    /// What to do with a whole line: the message it carries, or an answer (or nothing).
    fn read_message(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let line = std::mem::take(&mut self.line);
        let text = trimmed(&line);
        if text.is_empty() {
            self.line = line;
            self.line.clear();
            return None;
        }
        let parsed = serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(text);
        let outcome = match parsed {
            Ok(message) => Some(message),
            Err(e) => {
                let top = Top::scan(text);
                let id = top.request_id();
                if top.is_notification_or_response() {
                    tracing::warn!(
                        target: "shape",
                        "ignoring an MCP notification or response that could not be read: {e}"
                    );
                } else if top.depth > MAX_DEPTH {
                    self.answer(too_deep(top.depth), id);
                } else if matches!(
                    e.classify(),
                    serde_json::error::Category::Syntax | serde_json::error::Category::Eof
                ) {
                    self.answer(
                        ErrorData::parse_error(
                            format!(
                                "the message is not valid JSON ({e}); send one JSON-RPC \
                                 message a line"
                            ),
                            None,
                        ),
                        id,
                    );
                } else {
                    self.answer(
                        ErrorData::invalid_request(
                            format!(
                                "the message is not a JSON-RPC message this server reads ({e})"
                            ),
                            None,
                        ),
                        id,
                    );
                }
                None
            }
        };
        // The buffer's room is kept for the next line.
        self.line = line;
        self.line.clear();
        outcome
    }

    /// Answers an over-long line, by the id its head shows.
    fn too_long(&mut self) {
        let Some((head, total)) = self.head.take() else {
            return;
        };
        // The message's bytes, without the newline that ends it.
        let total = total.saturating_sub(1);
        let top = Top::scan(trimmed(&head));
        if top.is_notification_or_response() {
            tracing::warn!(
                target: "shape",
                bytes = total,
                "ignoring an MCP notification or response over the line length limit"
            );
            return;
        }
        let error = ErrorData::invalid_request(
            format!(
                "the message is {} bytes, over the {} bytes this server reads in one message; \
                 send less (a large value belongs in a stored result, passed by its handle)",
                crate::text::thousands(total as u64),
                crate::text::thousands(self.max_line_length as u64),
            ),
            Some(json!({ "bytes": total, "max_bytes": self.max_line_length })),
        );
        self.answer(error, top.request_id());
    }
}

fn too_deep(depth: usize) -> ErrorData {
    ErrorData::invalid_request(
        format!(
            "the message nests {depth} levels deep, more than the {MAX_DEPTH} levels of arrays \
             and objects this server reads (the arguments object is the third); send the \
             arguments nested less deeply"
        ),
        Some(json!({ "depth": depth, "max_depth": MAX_DEPTH })),
    )
}

/// A line without its newline, carriage return and byte order mark.
fn trimmed(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

impl<R, W> Transport<RoleServer> for Guarded<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.write.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(sending) = self.sending.as_mut() {
                let sent = sending.await;
                self.sending = None;
                if let Err(e) = sent {
                    tracing::error!(target: "shape", "writing an MCP error answer failed: {e}");
                    return None;
                }
            }
            match self.read_line().await {
                Line::End => return None,
                Line::TooLong => self.too_long(),
                Line::Read => {
                    if let Some(message) = self.read_message() {
                        return Some(message);
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        if let Some(sending) = self.sending.take() {
            // An answer already started is written before the writer closes.
            let _ = sending.await;
        }
        self.write.close().await
    }
}

// ---------------------------------------------------------------------------------------------
// What a line shows without parsing it whole: its depth, and its top-level `id` and `method`

/// The top level of a JSON line, read in one pass without recursion (so without a depth
/// limit): how deep it nests, and whether its object has `method` and `id` keys and the id.
#[derive(Debug, Default, PartialEq)]
struct Top {
    /// Whether the line starts with an object.
    object: bool,
    /// The deepest nesting of arrays and objects seen.
    depth: usize,
    /// Whether the object has a `method` key.
    method: bool,
    /// Whether it has an `id` key.
    has_id: bool,
    /// The `id` value's text, when it is a string or a number.
    id: Option<Vec<u8>>,
    /// Whether it has a `result` or an `error` key (a response).
    outcome: bool,
    /// Whether the object closed (a line cut short, the head of an over-long one, does not:
    /// an `id` may come after the cut).
    closed: bool,
}

/// Where the scan is in the top-level object.
#[derive(Clone, Copy, PartialEq)]
enum Expect {
    Key,
    Colon,
    Value,
    Comma,
}

impl Top {
    fn scan(line: &[u8]) -> Top {
        let mut top = Top::default();
        let mut depth = 0usize;
        let mut expect = Expect::Key;
        let mut key: Option<String> = None;
        let mut i = 0;
        while i < line.len() {
            let b = line[i];
            match b {
                b' ' | b'\t' | b'\n' | b'\r' => i += 1,
                b'{' | b'[' => {
                    if depth == 0 {
                        top.object = b == b'{';
                        if !top.object {
                            // Not an object: its depth is all that is left to learn.
                            top.depth = max_depth(line);
                            return top;
                        }
                    } else if depth == 1 && expect == Expect::Value {
                        top.value(key.take(), None);
                        expect = Expect::Comma;
                    }
                    depth += 1;
                    top.depth = top.depth.max(depth);
                    i += 1;
                }
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    i += 1;
                    if depth == 0 {
                        top.closed = true;
                        return top;
                    }
                }
                b'"' => {
                    let end = crate::text::json_string_end(line, i);
                    if depth == 1 {
                        let text = &line[i..end];
                        match expect {
                            Expect::Key => {
                                key = serde_json::from_slice::<String>(text).ok();
                                expect = Expect::Colon;
                            }
                            Expect::Value => {
                                top.value(key.take(), Some(text));
                                expect = Expect::Comma;
                            }
                            Expect::Colon | Expect::Comma => {}
                        }
                    }
                    i = end;
                }
                b':' => {
                    if depth == 1 && expect == Expect::Colon {
                        expect = Expect::Value;
                    }
                    i += 1;
                }
                b',' => {
                    if depth == 1 {
                        expect = Expect::Key;
                    }
                    i += 1;
                }
                _ if depth == 0 => return top,
                _ => {
                    // A number, `true`, `false`, `null` (or a stray byte): up to the next
                    // structural byte.
                    let end = line[i..]
                        .iter()
                        .position(|c| b" \t\n\r,:{}[]\"".contains(c))
                        .map_or(line.len(), |n| i + n);
                    // A scalar running to the end of the text is cut (the head of an over-long
                    // line): `"id":12` cut after the 1 must not read as id 1.
                    if depth == 1 && expect == Expect::Value && end < line.len() {
                        top.value(key.take(), Some(&line[i..end]));
                        expect = Expect::Comma;
                    }
                    i = end.max(i + 1);
                }
            }
        }
        top
    }

    /// Notes the value of `key` at the top level: `text` for a scalar or a string, `None` for
    /// an array or an object.
    fn value(&mut self, key: Option<String>, text: Option<&[u8]>) {
        match key.as_deref() {
            Some("id") => {
                self.has_id = true;
                self.id = text.map(<[u8]>::to_vec);
            }
            Some("method") => self.method = true,
            Some("result" | "error") => self.outcome = true,
            _ => {}
        }
    }

    /// The id, when the line has one a response can carry (a string or an integer).
    fn request_id(&self) -> Option<RequestId> {
        serde_json::from_slice::<RequestId>(self.id.as_deref()?).ok()
    }

    /// Whether the line is a notification (a method and no id, in a whole object) or a
    /// response (a result or an error and no method), which JSON-RPC never answers. A cut
    /// object with a method and no id seen may be a request whose id is past the cut: it is
    /// answered, without an id.
    fn is_notification_or_response(&self) -> bool {
        self.object
            && ((self.method && !self.has_id && self.closed) || (!self.method && self.outcome))
    }
}

/// The deepest nesting of arrays and objects in `line`, strings skipped.
fn max_depth(line: &[u8]) -> usize {
    let (mut depth, mut deepest, mut i) = (0usize, 0usize, 0usize);
    while i < line.len() {
        match line[i] {
            b'"' => {
                i = crate::text::json_string_end(line, i);
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"t","arguments":{{"a":{}{}}}}}}}"#,
            "[".repeat(depth.saturating_sub(3)),
            "]".repeat(depth.saturating_sub(3)),
        )
    }

    #[test]
    fn the_scan_finds_the_depth_and_the_id_wherever_they_are() {
        let top = Top::scan(nested(127).as_bytes());
        assert_eq!(
            (top.depth, top.request_id()),
            (127, Some(RequestId::Number(7)))
        );
        assert!(!top.is_notification_or_response());
        // The id after a deep value, written with escapes, as a string.
        let line = format!(
            r#"{{"method":"tools/call","params":{}{},"\u0069d":"a\"b"}}"#,
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        let top = Top::scan(line.as_bytes());
        assert_eq!(top.depth, 10_001);
        assert_eq!(top.request_id(), Some(RequestId::String("a\"b".into())));
        // Brackets inside strings are not nesting.
        let top = Top::scan(br#"{"id":1,"method":"x","params":{"q":"[[[{{{"}}"#);
        assert_eq!(
            (top.depth, top.request_id()),
            (2, Some(RequestId::Number(1)))
        );
        // A notification and a response are told apart from a request.
        assert!(
            Top::scan(br#"{"method":"notifications/x","params":[[[]]]}"#)
                .is_notification_or_response()
        );
        assert!(Top::scan(br#"{"id":3,"result":{}}"#).is_notification_or_response());
        // Cut before any id: perhaps a request, answered.
        assert!(
            !Top::scan(br#"{"method":"tools/call","params":{"a":"#).is_notification_or_response()
        );
        // An id that is an object, or null, is no id to answer with.
        assert_eq!(
            Top::scan(br#"{"id":{"a":1},"method":"m"}"#).request_id(),
            None
        );
        assert_eq!(Top::scan(br#"{"id":null,"method":"m"}"#).request_id(), None);
        // Not an object: its depth, and nothing else.
        let top = Top::scan(b"[[[1]]]");
        assert_eq!((top.object, top.depth, top.request_id()), (false, 3, None));
        // A line cut short (the head of an over-long one) still shows an id seen before the
        // cut; an id the cut runs through is no id (`12` cut to `1`, a string cut open).
        let top =
            Top::scan(br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"x":"aaaa"#);
        assert_eq!(top.request_id(), Some(RequestId::Number(12)));
        assert_eq!(Top::scan(br#"{"method":"m","id":1"#).request_id(), None);
        assert_eq!(Top::scan(br#"{"method":"m","id":"ab"#).request_id(), None);
        let whole = Top::scan(br#"{"method":"m","id":12}"#);
        assert_eq!(whole.request_id(), Some(RequestId::Number(12)));
        assert_eq!(Top::scan(b"garbage").request_id(), None);
    }

    #[test]
    fn serde_json_reads_127_levels_and_refuses_128() {
        // The limit the answers state is serde_json's, checked here at its edge.
        for (depth, reads) in [(126, true), (127, true), (128, false), (129, false)] {
            let line = nested(depth);
            assert_eq!(Top::scan(line.as_bytes()).depth, depth);
            let parsed = serde_json::from_str::<RxJsonRpcMessage<RoleServer>>(&line);
            assert_eq!(parsed.is_ok(), reads, "{depth}: {parsed:?}");
            assert_eq!(depth <= MAX_DEPTH, reads);
        }
    }
}
