//! Properties of the line codec and the message classifier: arbitrary bytes
//! never panic or hang, lines come back exactly, oversize lines are
//! reported and skipped, and protocol types round-trip.

use kaged_plugin_protocol::codec::{encode_line, Frame, LineDecoder};
use kaged_plugin_protocol::*;
use proptest::prelude::*;
use serde_json::{json, Value};

fn frames_of(input: &[u8], limit: usize, chunk: usize) -> Vec<Frame> {
    frames_with(LineDecoder::with_limit(limit), input, chunk)
}

/// The frames `d` yields for `input` arriving `chunk` bytes at a time.
fn frames_with(mut d: LineDecoder, input: &[u8], chunk: usize) -> Vec<Frame> {
    // Bytes arriving `chunk` at a time exercise partial lines.
    let mut out = Vec::new();
    for mut piece in input.chunks(chunk.max(1)) {
        while !piece.is_empty() {
            let (used, frame) = d.feed(piece);
            assert!(used > 0, "the decoder took nothing: a hang in disguise");
            piece = &piece[used..];
            out.extend(frame);
        }
    }
    out.extend(d.finish());
    assert!(
        out.len() <= input.len() + 1,
        "more frames than bytes: a hang in disguise"
    );
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// `at_once`: the same frames as the default decoder, except that an
    /// oversize line is reported once, as soon as it passes the limit (its
    /// `len` is what was read by then: past the limit, by less than one
    /// chunk), and every other line comes back the same.
    #[test]
    fn at_once_reports_an_oversize_line_as_it_passes_the_limit(
        lines in proptest::collection::vec(("[a-z]{0,30}", proptest::bool::ANY), 0..12),
        limit in 8usize..40, chunk in 1usize..50, terminated in proptest::bool::ANY) {
        let mut input = Vec::new();
        for (i, (l, big)) in lines.iter().enumerate() {
            let text = if *big { "x".repeat(limit + 1 + l.len()) } else { l.clone() };
            input.extend_from_slice(text.as_bytes());
            if terminated || i + 1 < lines.len() { input.push(b'\n'); }
        }
        let late = frames_of(&input, limit, chunk);
        let early = frames_with(LineDecoder::with_limit(limit).at_once(), &input, chunk);
        prop_assert_eq!(late.len(), early.len());
        for (l, e) in late.iter().zip(&early) {
            match (l, e) {
                (Frame::Line(a), Frame::Line(b)) => prop_assert_eq!(a, b),
                (Frame::Oversize { len: full }, Frame::Oversize { len: seen }) => {
                    prop_assert!(*seen > limit && *seen <= *full, "seen {} full {}", seen, full);
                    prop_assert!(*seen <= limit + chunk, "caught late: {} > {} + {}", seen, limit, chunk);
                }
                other => prop_assert!(false, "{:?}", other),
            }
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(input in proptest::collection::vec(any::<u8>(), 0..2048),
                                   limit in 1usize..64, chunk in 1usize..17) {
        let frames = frames_of(&input, limit, chunk);
        for f in &frames {
            if let Frame::Line(l) = f {
                prop_assert!(l.len() <= limit);
                prop_assert!(!l.contains(&b'\n'));
                let _ = RpcMessage::from_slice(l);
            }
        }
    }

    #[test]
    fn lines_under_the_limit_come_back_exactly(lines in proptest::collection::vec("[^\n]{0,40}", 0..20),
                                               chunk in 1usize..9) {
        let mut input = Vec::new();
        for l in &lines { input.extend_from_slice(l.as_bytes()); input.push(b'\n'); }
        // 40 chars are at most 160 bytes of UTF-8.
        let frames = frames_of(&input, 160, chunk);
        let expected: Vec<Frame> = lines.iter().map(|l| Frame::Line(l.as_bytes().to_vec())).collect();
        prop_assert_eq!(frames, expected);
    }

    #[test]
    fn oversize_lines_are_reported_and_skipped(before in "[a-z]{0,10}", big in 65usize..300, after in "[a-z]{0,10}",
                                               chunk in 1usize..40) {
        let mut input = before.clone().into_bytes();
        input.push(b'\n');
        input.extend(std::iter::repeat_n(b'x', big));
        input.push(b'\n');
        input.extend_from_slice(after.as_bytes());
        input.push(b'\n');
        let frames = frames_of(&input, 64, chunk);
        prop_assert_eq!(frames, vec![Frame::Line(before.into_bytes()), Frame::Oversize { len: big },
                                     Frame::Line(after.into_bytes())]);
    }

    #[test]
    fn arbitrary_json_classifies_without_panicking(v in arb_json()) {
        match RpcMessage::from_value(v.clone()) {
            Ok(m) => {
                // What classifies re-serializes to an equivalent message.
                let again = RpcMessage::from_value(serde_json::to_value(&m).unwrap());
                prop_assert_eq!(again, Ok(m));
            }
            Err(e) => { let _ = e.answer(); }
        }
    }

    #[test]
    fn requests_round_trip(id in any::<i64>(), method in "[a-z]{1,8}\\.[a-z]{1,8}", x in any::<i32>()) {
        let r = Request::new(Id(IdValue::Int(id)), method, Some(json!({"x": x})));
        let line = encode_line(&r).unwrap();
        let back = RpcMessage::from_slice(&line[..line.len() - 1]).unwrap();
        prop_assert_eq!(back, RpcMessage::Request(r));
    }

    #[test]
    fn contexts_round_trip(op in proptest::option::of("[a-z]{1,6}"), agent in proptest::bool::ANY, rid in "[a-z0-9_]{1,12}") {
        let ctx = PluginCallContext {
            operator_id: op,
            project_id: agent.then(|| "music".to_string()),
            agent_path: agent.then(|| "primary.subagents.researcher".to_string()),
            session_id: agent.then(|| "ses_1".to_string()),
            request_id: rid,
        };
        let v = serde_json::to_value(&ctx).unwrap();
        prop_assert_eq!(serde_json::from_value::<PluginCallContext>(v).unwrap(), ctx.clone());
        prop_assert!(ctx.check().is_ok());
    }

    #[test]
    fn messages_round_trip(id in "[a-z0-9_]{1,8}", content in ".{0,40}", keep in proptest::bool::ANY, extra in proptest::option::of(any::<i32>())) {
        let mut m = Message::new(id, MessageRole::Assistant, content);
        m.always_keep = keep;
        if let Some(e) = extra { m.extra.insert("tokens".into(), json!(e)); }
        let v = serde_json::to_value(&m).unwrap();
        prop_assert_eq!(serde_json::from_value::<Message>(v).unwrap(), m);
    }

    #[test]
    fn storage_params_round_trip(sql in ".{0,40}", n in any::<i64>(), s in ".{0,10}", b in proptest::bool::ANY) {
        let p = StorageParams { sql, params: vec![SqlValue::from(n), SqlValue::from(s), SqlValue::from(b), SqlValue::Null] };
        let v = serde_json::to_value(&p).unwrap();
        prop_assert_eq!(serde_json::from_value::<StorageParams>(v).unwrap(), p);
    }
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[a-z0-9.]{0,8}".prop_map(Value::String),
        Just(json!("2.0")),
        Just(json!("initialize")),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("jsonrpc".to_string()),
                    Just("id".to_string()),
                    Just("method".to_string()),
                    Just("params".to_string()),
                    Just("result".to_string()),
                    Just("error".to_string()),
                    "[a-z]{1,4}".prop_map(String::from)
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

#[test]
fn encode_refuses_lines_over_4_mib() {
    let big = "x".repeat(kaged_plugin_protocol::codec::MAX_LINE_BYTES);
    assert!(
        encode_line(&big).is_err(),
        "with quotes the line is over the limit"
    );
    assert!(encode_line(&"x".repeat(1000)).is_ok());
}

/// Found by the `line_codec` fuzz target: without serde_json's
/// `float_roundtrip`, parsing `110000016750638738377249276` (the input less its first byte) gave a
/// float one unit in the last place off, so a number a plugin sent came
/// out of the host changed.
#[test]
fn a_float_survives_decoding_and_encoding_exactly() {
    for text in [
        "110000016750638738377249276",
        "1.1000001675063873e+26",
        "0.1",
        "2.2250738585072014e-308",
    ] {
        let v: Value = serde_json::from_str(text).expect("a number");
        let line = encode_line(&v).expect("encodes");
        let back: Value = serde_json::from_slice(&line[..line.len() - 1]).expect("decodes");
        assert_eq!(
            back.as_f64().map(f64::to_bits),
            v.as_f64().map(f64::to_bits),
            "{text}"
        );
        assert_eq!(
            serde_json::to_string(&back).ok(),
            serde_json::to_string(&v).ok(),
            "{text}"
        );
    }
}
