//! The line codec against a model: whatever the chunking and the limit,
//! `LineDecoder` yields exactly the `\n`-separated segments of the stream
//! (a segment over the limit as `Oversize` with its length), and a line
//! `encode_line` writes is one line that decodes to the same JSON.
#![no_main]

use kaged_plugin_protocol::codec::{encode_line, Frame, LineDecoder};
use libfuzzer_sys::fuzz_target;

/// What the decoder must yield for `stream` with `limit`.
fn model(stream: &[u8], limit: usize) -> Vec<Frame> {
    let mut segments: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    // The part after the last newline is a line only when it is not empty.
    if segments.last().is_some_and(|s| s.is_empty()) {
        segments.pop();
    }
    segments
        .into_iter()
        .map(|s| match s.len() > limit {
            true => Frame::Oversize { len: s.len() },
            false => Frame::Line(s.to_vec()),
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    // The first byte picks the limit (0..=63) and the chunk size (1..=4 ×
    // a byte of the stream, so chunks vary along it).
    let limit = usize::from(head & 0x3f);
    let mut decoder = LineDecoder::with_limit(limit);
    let mut frames = Vec::new();
    let mut at = 0;
    while at < rest.len() {
        let size = 1 + usize::from(rest[at] & 0x07) * (1 + usize::from(head >> 6));
        let end = (at + size).min(rest.len());
        let mut chunk = &rest[at..end];
        while !chunk.is_empty() {
            let (used, frame) = decoder.feed(chunk);
            assert!(
                used >= 1 && used <= chunk.len(),
                "feed took {used} of {}",
                chunk.len()
            );
            frames.extend(frame);
            chunk = &chunk[used..];
        }
        at = end;
    }
    frames.extend(decoder.finish());
    assert_eq!(decoder.finish(), None, "finish twice");
    assert_eq!(frames, model(rest, limit));

    // Encoding: any JSON value becomes one line that decodes to itself.
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(rest) {
        let line = encode_line(&value).expect("a JSON value encodes");
        assert_eq!(line.last(), Some(&b'\n'));
        assert!(
            !line[..line.len() - 1].contains(&b'\n'),
            "newline inside a line"
        );
        let mut d = LineDecoder::new();
        let (used, frame) = d.feed(&line);
        assert_eq!(used, line.len());
        let Some(Frame::Line(body)) = frame else {
            panic!("no line from {line:?}");
        };
        let back: serde_json::Value = serde_json::from_slice(&body).expect("the line is JSON");
        assert_eq!(
            serde_json::to_string(&back).ok(),
            serde_json::to_string(&value).ok()
        );
    }
});
