//! Server-sent events framing (the WHATWG `text/event-stream` format), push-based.
//!
//! Why not a crate: the host pushes body chunks into the library (C callbacks, N-API
//! promises, [`BodyStream`](super::BodyStream)), and fuzz targets and benchmarks feed byte
//! slices directly, so the parser has to be a synchronous "feed bytes, get events" state
//! machine. The two maintained candidates are pull adapters instead: `eventsource-stream`
//! 0.2.3 wraps a `futures::Stream` (nom 7 underneath, unreleased since 2022, one `String`
//! per event field) and `sse-stream` 0.3 wraps an `http-body`/`TryStream` of `Buf`s and
//! keeps its parser private (pulling in `bytes`, `http-body`, `http-body-util`). Either
//! would add dependencies to every host's `.so` for ~150 lines of framing, and neither
//! lets an event borrow the decoder's buffer. So the framing lives here; it follows the
//! spec's parsing rules:
//!
//! - lines end with CRLF, LF or CR, and a chunk may end between CR and LF;
//! - a leading UTF-8 BOM is dropped; lines starting with `:` are comments;
//! - `field: value` strips one space after the colon; `data` lines of one event are
//!   joined with `\n`; an empty line dispatches the event; events without data are not
//!   dispatched; `id` (as of the last completed event) and `retry` are kept
//!   ([`SseDecoder::last_event_id`], [`SseDecoder::retry_ms`]) for a stream that resumes
//!   (an MCP server's, MCP-1); a chat completion is never reconnected.
//!
//! Chunk boundaries may fall anywhere, also inside a multi-byte UTF-8 character: bytes are
//! buffered per line and decoded only when an event is complete. One departure from the
//! spec: at the end of the body an unterminated last line and a pending event are still
//! dispatched, so a server that omits the final blank line after `data: [DONE]` works.

use std::fmt;

/// The most bytes one event's data, or one line, may take; beyond it the stream is
/// rejected instead of growing memory without bound. The limit applies to the line as a
/// whole, wherever the chunk boundaries fall, so the outcome never depends on chunking.
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// The most bytes of an `event` field that are kept; a longer name is cut at the last
/// character boundary at or before this many bytes (never inside a UTF-8 character).
pub const MAX_EVENT_NAME_BYTES: usize = 256;

/// A framing failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseError {
    /// An event or a line exceeded [`MAX_EVENT_BYTES`].
    EventTooLarge,
    /// An event's data was not UTF-8.
    InvalidUtf8,
}

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EventTooLarge => write!(f, "SSE event larger than {MAX_EVENT_BYTES} bytes"),
            Self::InvalidUtf8 => write!(f, "SSE event data is not UTF-8"),
        }
    }
}

impl std::error::Error for SseError {}

/// One dispatched event, borrowing the decoder's buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event` field, `"message"` when absent.
    pub event: &'a str,
    /// The `data` lines joined with `\n`.
    pub data: &'a str,
}

/// Incremental SSE decoder: feed it chunks as they arrive.
///
/// ```
/// use arkagent::llm::SseDecoder;
/// let mut decoder = SseDecoder::new();
/// let mut seen = Vec::new();
/// for chunk in [&b"data: he"[..], b"llo\r", b"\n\r\ndata: [DONE]\n\n"] {
///     decoder.feed(chunk, |e| { seen.push(e.data.to_owned()); Ok::<_, arkagent::llm::SseError>(()) }).unwrap();
/// }
/// assert_eq!(seen, ["hello", "[DONE]"]);
/// ```
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of an unterminated line carried over from earlier chunks.
    line: Vec<u8>,
    /// Data of the event being built (lines joined with `\n`).
    data: Vec<u8>,
    /// Event type of the event being built; empty means `message`.
    event: Vec<u8>,
    /// A `data` field was seen for the current event.
    has_data: bool,
    /// The previous chunk ended with CR: a leading LF of the next chunk belongs to it.
    after_cr: bool,
    /// At least one line has been processed (the BOM can only precede the first).
    started: bool,
    /// The last `id` field read (at most [`MAX_EVENT_NAME_BYTES`] of it): the event being
    /// built's, until it is dispatched.
    id_buffer: Vec<u8>,
    /// The id as of the last dispatched event (the "last event ID string").
    last_id: Vec<u8>,
    /// The last valid `retry` field, in ms.
    retry: Option<u64>,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// The last event id the stream set (`id:` without a NUL; empty resets it) as of the
    /// last event it completed — not the `id` of an event still being read — for a client
    /// that resumes the stream with `Last-Event-ID`, so that the server sends that event
    /// again.
    pub fn last_event_id(&self) -> Option<&str> {
        std::str::from_utf8(&self.last_id).ok().filter(|id| !id.is_empty())
    }

    /// Forgets the event being read (its partial line, fields and `id`), keeping the last
    /// completed event's id and the `retry`: for a stream that broke off mid-event and is
    /// resumed, whose next bytes start a new event.
    pub fn discard_event(&mut self) {
        self.line.clear();
        self.data.clear();
        self.event.clear();
        self.has_data = false;
        self.after_cr = false;
        self.id_buffer.clone_from(&self.last_id);
    }

    /// The reconnection time the stream asked for (`retry:` with ASCII digits only), in ms.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry
    }

    /// Feeds one chunk; `on_event` is called for every event it completes, in order.
    /// Stops at the first error (the decoder should then be dropped).
    pub fn feed<E: From<SseError>>(
        &mut self,
        chunk: &[u8],
        mut on_event: impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut rest = chunk;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            if self.line.len() + end > MAX_EVENT_BYTES {
                return Err(SseError::EventTooLarge.into());
            }
            if self.line.is_empty() {
                self.process_line(&rest[..end], &mut on_event)?;
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&rest[..end]);
                let result = self.process_line(&line, &mut on_event);
                line.clear();
                self.line = line; // keep the allocation
                result?;
            }
            let mut next = end + 1;
            if rest[end] == b'\r' {
                match rest.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            rest = &rest[next..];
        }
        if !rest.is_empty() {
            if self.line.len() + rest.len() > MAX_EVENT_BYTES {
                return Err(SseError::EventTooLarge.into());
            }
            self.line.extend_from_slice(rest);
        }
        Ok(())
    }

    /// Ends the stream: dispatches an unterminated last line and a pending event.
    pub fn finish<E: From<SseError>>(&mut self, mut on_event: impl FnMut(SseEvent<'_>) -> Result<(), E>) -> Result<(), E> {
        if !self.line.is_empty() {
            // feed() already refused an unterminated line over the limit.
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, &mut on_event)?;
        }
        self.after_cr = false;
        self.dispatch(&mut on_event)
    }

    fn process_line<E: From<SseError>>(
        &mut self,
        mut line: &[u8],
        on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if !self.started {
            self.started = true;
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.is_empty() {
            return self.dispatch(on_event);
        }
        if line[0] == b':' {
            return Ok(()); // comment, e.g. DeepSeek's ": keep-alive"
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.data.len() + value.len() + 1 > MAX_EVENT_BYTES {
                    return Err(SseError::EventTooLarge.into());
                }
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(&value[..event_name_cut(value)]);
            }
            b"id" if !value.contains(&0) => {
                self.id_buffer.clear();
                self.id_buffer.extend_from_slice(&value[..event_name_cut(value)]);
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            _ => {} // unknown fields
        }
        Ok(())
    }

    fn dispatch<E: From<SseError>>(&mut self, on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), E>) -> Result<(), E> {
        self.last_id.clone_from(&self.id_buffer);
        if !self.has_data {
            self.event.clear();
            return Ok(());
        }
        let result = match (std::str::from_utf8(&self.data), std::str::from_utf8(&self.event)) {
            (Ok(data), Ok(event)) => on_event(SseEvent { event: if event.is_empty() { "message" } else { event }, data }),
            _ => Err(SseError::InvalidUtf8.into()),
        };
        self.data.clear();
        self.event.clear();
        self.has_data = false;
        result
    }
}

/// Where an `event` value is cut: its length when within [`MAX_EVENT_NAME_BYTES`],
/// otherwise the last position at or before the cap that does not fall on a UTF-8
/// continuation byte (a character boundary when the value is UTF-8).
fn event_name_cut(value: &[u8]) -> usize {
    if value.len() <= MAX_EVENT_NAME_BYTES {
        return value.len();
    }
    let mut cut = MAX_EVENT_NAME_BYTES;
    // A UTF-8 character has at most three continuation bytes.
    while cut > MAX_EVENT_NAME_BYTES - 3 && value[cut] & 0xC0 == 0x80 {
        cut -= 1;
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_1_the_last_event_id_is_the_last_completed_events_and_a_cut_event_is_discarded() {
        let mut d = SseDecoder::new();
        let seen = std::cell::RefCell::new(Vec::<String>::new());
        let push = |e: SseEvent<'_>| {
            seen.borrow_mut().push(e.data.to_owned());
            Ok::<(), SseError>(())
        };
        d.feed(b"id: e1\nretry: 20\ndata: \n\nid: e2\ndata: {\"res", push).unwrap();
        assert_eq!(d.last_event_id(), Some("e1"), "e2 is still being read");
        // The stream broke; the resumed one starts with e2 whole.
        d.discard_event();
        assert_eq!((d.last_event_id(), d.retry_ms()), (Some("e1"), Some(20)));
        d.feed(b"id: e2\ndata: {\"result\":1}\n\n", push).unwrap();
        assert_eq!(d.last_event_id(), Some("e2"));
        assert_eq!(*seen.borrow(), ["", "{\"result\":1}"], "the cut bytes never joined the next event");
    }

    fn decode(chunks: &[&[u8]]) -> Vec<(String, String)> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        let mut push = |e: SseEvent<'_>| {
            out.push((e.event.to_owned(), e.data.to_owned()));
            Ok::<_, SseError>(())
        };
        for c in chunks {
            d.feed(c, &mut push).unwrap();
        }
        d.finish(&mut push).unwrap();
        out
    }

    fn msg(data: &str) -> (String, String) {
        ("message".to_owned(), data.to_owned())
    }

    #[test]
    fn llm_2_sse_line_endings_comments_and_multiline_data() {
        let body = b"\xEF\xBB\xBF: keep-alive\r\ndata: a\r\ndata:b\r\rdata: c\n\nevent: error\ndata: {}\n\nid: 7\nretry: 5\n\n";
        let expected = vec![msg("a\nb"), msg("c"), ("error".to_owned(), "{}".to_owned())];
        assert_eq!(decode(&[body]), expected);
        // Every split point, including between CR and LF and inside the BOM.
        for i in 0..body.len() {
            assert_eq!(decode(&[&body[..i], &body[i..]]), expected, "split at {i}");
        }
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(decode(&bytes), expected);
    }

    #[test]
    fn llm_2_sse_utf8_split_inside_a_character() {
        let body = "data: 北京🌤️\n\n".as_bytes();
        for i in 0..body.len() {
            assert_eq!(decode(&[&body[..i], &body[i..]]), vec![msg("北京🌤️")]);
        }
    }

    #[test]
    fn llm_2_sse_unterminated_tail_is_dispatched_at_the_end() {
        assert_eq!(decode(&[b"data: x\n\ndata: [DONE]"]), vec![msg("x"), msg("[DONE]")]);
        assert_eq!(decode(&[b"data: x\n"]), vec![msg("x")]);
        assert!(decode(&[b": only a comment\n\n"]).is_empty());
    }

    #[test]
    fn llm_2_sse_rejects_invalid_utf8() {
        let mut d = SseDecoder::new();
        let r = d.feed(b"data: \xFF\xFE\n\n", |_| Ok::<_, SseError>(()));
        assert_eq!(r, Err(SseError::InvalidUtf8));
    }

    #[test]
    #[cfg_attr(miri, ignore = "allocates 16 MiB")]
    fn llm_2_sse_rejects_oversized_events() {
        let mut d = SseDecoder::new();
        let big = vec![b'x'; MAX_EVENT_BYTES / 2 + 1];
        d.feed(b"data: ", |_| Ok::<_, SseError>(())).unwrap();
        d.feed(&big, |_| Ok::<_, SseError>(())).unwrap();
        assert_eq!(d.feed(&big, |_| Ok::<_, SseError>(())), Err(SseError::EventTooLarge));
    }
    #[test]
    fn llm_2_sse_event_name_cap_keeps_whole_characters() {
        // Characters of 1 to 4 bytes straddling the 256-byte cap at every offset.
        for ch in ["a", "é", "北", "🌤"] {
            for pad in MAX_EVENT_NAME_BYTES - 4..=MAX_EVENT_NAME_BYTES {
                let name = format!("{}{}", "x".repeat(pad), ch.repeat(3));
                let body = format!("event: {name}\ndata: d\n\n");
                let events = decode(&[body.as_bytes()]);
                assert_eq!(events.len(), 1, "{ch} at {pad}");
                let kept = &events[0].0;
                assert!(kept.len() <= MAX_EVENT_NAME_BYTES && kept.len() > MAX_EVENT_NAME_BYTES - 4, "{ch} at {pad}: {}", kept.len());
                assert!(name.starts_with(kept.as_str()));
            }
        }
        let exact = "é".repeat(MAX_EVENT_NAME_BYTES / 2);
        assert_eq!(decode(&[format!("event: {exact}\ndata: d\n\n").as_bytes()])[0].0, exact);
    }

    #[test]
    #[cfg_attr(miri, ignore = "allocates 16 MiB")]
    fn llm_2_sse_line_limit_does_not_depend_on_chunking() {
        fn outcome(chunks: &[&[u8]]) -> Result<usize, SseError> {
            let mut d = SseDecoder::new();
            let mut n = 0;
            for c in chunks {
                d.feed(c, |_| {
                    n += 1;
                    Ok::<_, SseError>(())
                })?;
            }
            d.finish(|_| {
                n += 1;
                Ok::<_, SseError>(())
            })?;
            Ok(n)
        }
        for len in [MAX_EVENT_BYTES, MAX_EVENT_BYTES + 1] {
            // A comment line (no data) of `len` bytes, then one event.
            let mut body = vec![b':'; len];
            body.extend_from_slice(b"\ndata: x\n\n");
            let whole = outcome(&[&body]);
            assert_eq!(whole, if len > MAX_EVENT_BYTES { Err(SseError::EventTooLarge) } else { Ok(1) });
            for cut in [1, len / 2, len, len + 1] {
                assert_eq!(outcome(&[&body[..cut], &body[cut..]]), whole, "len {len} cut {cut}");
            }
        }
    }
}
