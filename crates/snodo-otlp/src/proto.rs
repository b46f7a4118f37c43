//! The protobuf wire format, as much of it as OTLP needs: varints, fixed
//! widths, length-delimited fields, and the common `KeyValue`/`AnyValue`
//! messages. Nested messages are written in place: a length slot is
//! reserved, the body written after it, and the slot shrunk to the
//! varint the body's length needs.

/// Wire type 0: a varint.
const VARINT: u32 = 0;
/// Wire type 1: eight bytes.
const FIXED64: u32 = 1;
/// Wire type 2: a length and that many bytes.
const LEN: u32 = 2;
/// Wire type 5: four bytes.
const FIXED32: u32 = 5;

/// The widest varint of a `u32` length.
const LEN_SLOT: usize = 5;

#[inline]
pub(crate) fn varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

#[inline]
fn tag(buf: &mut Vec<u8>, field: u32, wire: u32) {
    varint(buf, u64::from((field << 3) | wire));
}

/// A varint field (`uint32`, `uint64`, `int64`, `bool`, an enum).
#[inline]
pub(crate) fn uint(buf: &mut Vec<u8>, field: u32, v: u64) {
    tag(buf, field, VARINT);
    varint(buf, v);
}

/// An `int64` field (two's complement in a varint).
#[inline]
pub(crate) fn int(buf: &mut Vec<u8>, field: u32, v: i64) {
    uint(buf, field, v as u64);
}

/// A `fixed64` field.
#[inline]
pub(crate) fn fixed64(buf: &mut Vec<u8>, field: u32, v: u64) {
    tag(buf, field, FIXED64);
    buf.extend_from_slice(&v.to_le_bytes());
}

/// A `double` field.
#[inline]
pub(crate) fn double(buf: &mut Vec<u8>, field: u32, v: f64) {
    fixed64(buf, field, v.to_bits());
}

/// A `fixed32` field.
#[inline]
pub(crate) fn fixed32(buf: &mut Vec<u8>, field: u32, v: u32) {
    tag(buf, field, FIXED32);
    buf.extend_from_slice(&v.to_le_bytes());
}

/// A `bytes` or `string` field.
#[inline]
pub(crate) fn bytes(buf: &mut Vec<u8>, field: u32, v: &[u8]) {
    tag(buf, field, LEN);
    varint(buf, v.len() as u64);
    buf.extend_from_slice(v);
}

/// A `string` field.
#[inline]
pub(crate) fn string(buf: &mut Vec<u8>, field: u32, v: &str) {
    bytes(buf, field, v.as_bytes());
}

/// An embedded message (or packed repeated field) written by `body`.
#[inline]
pub(crate) fn message(buf: &mut Vec<u8>, field: u32, body: impl FnOnce(&mut Vec<u8>)) {
    tag(buf, field, LEN);
    let slot = buf.len();
    buf.extend_from_slice(&[0; LEN_SLOT]);
    body(buf);
    close(buf, slot);
}

/// Writes the length of what follows the slot at `slot` into it.
fn close(buf: &mut Vec<u8>, slot: usize) {
    let len = buf.len() - slot - LEN_SLOT;
    let mut head = [0u8; LEN_SLOT];
    let mut n = 0;
    let mut v = len as u64;
    while v >= 0x80 {
        head[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    head[n] = v as u8;
    n += 1;
    buf[slot..slot + n].copy_from_slice(&head[..n]);
    if n < LEN_SLOT {
        buf.copy_within(slot + LEN_SLOT.., slot + n);
        buf.truncate(buf.len() - (LEN_SLOT - n));
    }
}

/// An attribute value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum AnyValue<'a> {
    /// `string_value`.
    Str(&'a str),
    /// `bool_value`.
    Bool(bool),
    /// `int_value`.
    Int(i64),
    /// `double_value`.
    Double(f64),
}

/// How many bytes the varint `v` takes.
#[inline]
fn varint_len(v: u64) -> usize {
    // One byte per started group of seven bits (at least one).
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// How many bytes a length-delimited field of `len` bytes takes, with its
/// one-byte tag.
#[inline]
fn len_field(len: usize) -> usize {
    1 + varint_len(len as u64) + len
}

/// One `KeyValue` in field `field` of the message being written. Its
/// lengths are computed first: the request path writes many of these.
#[inline]
pub(crate) fn key_value(buf: &mut Vec<u8>, field: u32, key: &str, value: AnyValue<'_>) {
    if short_key_value(buf, field, key, value) {
        return;
    }
    let any = match value {
        AnyValue::Str(s) => len_field(s.len()),
        AnyValue::Bool(_) => 2,
        AnyValue::Int(i) => 1 + varint_len(i as u64),
        AnyValue::Double(_) => 9,
    };
    let kv = len_field(key.len()) + len_field(any);
    buf.reserve(kv + 1 + LEN_SLOT);
    tag(buf, field, LEN);
    varint(buf, kv as u64);
    string(buf, 1, key);
    tag(buf, 2, LEN);
    varint(buf, any as u64);
    match value {
        AnyValue::Str(s) => string(buf, 1, s),
        AnyValue::Bool(b) => uint(buf, 2, u64::from(b)),
        AnyValue::Int(i) => int(buf, 3, i),
        AnyValue::Double(d) => double(buf, 4, d),
    }
}

/// The common case of [`key_value`] in a few copies: a one-byte tag, every
/// length under 128 (so each length is one byte), a string or a
/// non-negative integer. `false` when it does not apply and nothing was
/// written.
#[inline]
fn short_key_value(buf: &mut Vec<u8>, field: u32, key: &str, value: AnyValue<'_>) -> bool {
    let any = match value {
        AnyValue::Str(s) => 2 + s.len(),
        AnyValue::Int(i) if i >= 0 => 1 + varint_len(i as u64),
        _ => return false,
    };
    let kv = 2 + key.len() + 2 + any;
    if field >= 16 || kv >= 0x80 {
        return false;
    }
    buf.reserve(2 + kv);
    buf.extend_from_slice(&[
        (field << 3 | LEN) as u8,
        kv as u8,
        (1 << 3 | LEN) as u8,
        key.len() as u8,
    ]);
    buf.extend_from_slice(key.as_bytes());
    buf.extend_from_slice(&[(2 << 3 | LEN) as u8, any as u8]);
    match value {
        AnyValue::Str(s) => {
            buf.extend_from_slice(&[(1 << 3 | LEN) as u8, s.len() as u8]);
            buf.extend_from_slice(s.as_bytes());
        }
        AnyValue::Int(i) => {
            buf.push((3 << 3 | VARINT) as u8);
            varint(buf, i as u64);
        }
        _ => {}
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message as _;

    #[test]
    fn varints_and_lengths_match_prost() {
        for n in [0usize, 1, 127, 128, 300, 16_383, 16_384, 70_000] {
            let text = "x".repeat(n);
            let mut ours = Vec::new();
            key_value(&mut ours, 1, "k", AnyValue::Str(&text));
            let theirs = opentelemetry_proto::tonic::common::v1::KeyValueList {
                values: vec![opentelemetry_proto::tonic::common::v1::KeyValue {
                    key: "k".into(),
                    value: Some(opentelemetry_proto::tonic::common::v1::AnyValue {
                        value: Some(
                            opentelemetry_proto::tonic::common::v1::any_value::Value::StringValue(
                                text.clone(),
                            ),
                        ),
                    }),
                    ..Default::default()
                }],
            }
            .encode_to_vec();
            assert_eq!(ours, theirs, "{n} bytes");
        }
    }

    #[test]
    fn the_short_form_matches_prost_at_its_bounds() {
        use opentelemetry_proto::tonic::common::v1::{
            AnyValue as Any, KeyValue, KeyValueList, any_value::Value,
        };
        let encode = |field: u32, key: &str, value: AnyValue<'_>| {
            let mut ours = Vec::new();
            key_value(&mut ours, field, key, value);
            ours
        };
        let prost = |key: &str, value: Value| {
            KeyValueList {
                values: vec![KeyValue {
                    key: key.into(),
                    value: Some(Any { value: Some(value) }),
                    ..Default::default()
                }],
            }
            .encode_to_vec()
        };
        // Around the one-byte lengths: key and value lengths whose sum
        // crosses 128, and integers whose varint takes 1 to 10 bytes.
        for key_len in [1usize, 20, 60, 121, 122, 127, 128] {
            let key = "k".repeat(key_len);
            for text_len in [0usize, 1, 50, 119, 120, 121, 122, 127, 128, 200] {
                let text = "v".repeat(text_len);
                assert_eq!(
                    encode(1, &key, AnyValue::Str(&text)),
                    prost(&key, Value::StringValue(text.clone())),
                    "key {key_len}, text {text_len}"
                );
            }
            for n in [0i64, 1, 127, 128, 40_000, i64::MAX, -1, i64::MIN] {
                assert_eq!(
                    encode(1, &key, AnyValue::Int(n)),
                    prost(&key, Value::IntValue(n)),
                    "key {key_len}, int {n}"
                );
            }
        }
        // A tag of two bytes (field 16) takes the general form.
        let mut wide = Vec::new();
        key_value(&mut wide, 16, "k", AnyValue::Str("v"));
        assert_eq!(&wide[..2], &[16 << 3 | 2, 1]);
        assert_eq!(&wide[3..], &prost("k", Value::StringValue("v".into()))[2..]);
    }

    #[test]
    fn varint_lengths() {
        for v in [
            0u64,
            1,
            127,
            128,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut buf = Vec::new();
            varint(&mut buf, v);
            assert_eq!(varint_len(v), buf.len(), "{v}");
        }
    }

    #[test]
    fn every_value_kind_decodes() {
        use opentelemetry_proto::tonic::common::v1::{KeyValueList, any_value::Value};
        let mut buf = Vec::new();
        key_value(&mut buf, 1, "s", AnyValue::Str("v"));
        key_value(&mut buf, 1, "b", AnyValue::Bool(true));
        key_value(&mut buf, 1, "i", AnyValue::Int(-5));
        key_value(&mut buf, 1, "big", AnyValue::Int(i64::MAX));
        key_value(&mut buf, 1, "d", AnyValue::Double(0.5));
        let list = KeyValueList::decode(buf.as_slice()).unwrap();
        let values: Vec<_> = list
            .values
            .into_iter()
            .map(|kv| (kv.key, kv.value.unwrap().value.unwrap()))
            .collect();
        assert_eq!(
            values,
            vec![
                ("s".into(), Value::StringValue("v".into())),
                ("b".into(), Value::BoolValue(true)),
                ("i".into(), Value::IntValue(-5)),
                ("big".into(), Value::IntValue(i64::MAX)),
                ("d".into(), Value::DoubleValue(0.5)),
            ]
        );
    }
}
