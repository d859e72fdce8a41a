//! JSON-RPC 2.0 envelopes: requests, notifications, responses and errors,
//! and the classification of one incoming line into one of them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::codes::ErrorCode;

/// The literal `"2.0"` every message carries in its `jsonrpc` member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, JsonSchema)]
pub struct Version;

impl Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("2.0")
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s == "2.0" {
            Ok(Version)
        } else {
            Err(serde::de::Error::custom(format!(
                "jsonrpc must be \"2.0\", got {s:?}"
            )))
        }
    }
}

/// A request id. Our own ids are integers counted from 1 per direction; a
/// peer's id may be any JSON value and is answered verbatim.
///
/// ```
/// use kaged_plugin_protocol::Id;
/// assert_eq!(Id::from(7u64).as_u64(), Some(7));
/// assert_eq!(serde_json::to_string(&Id::null()).unwrap(), "null");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct Id(pub IdValue);

/// The JSON shapes an id may take.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum IdValue {
    /// An integer id (what both kaged peers send).
    Int(i64),
    /// A string id (accepted from foreign peers, echoed verbatim).
    Str(String),
    /// Any other JSON value (floats, objects...), echoed verbatim.
    Other(#[schemars(with = "Value")] OtherId),
    /// `null`: the id of answers to unparseable input and batches.
    Null,
}

/// A non-integer, non-string id, kept as its exact JSON text so that it is
/// hashable and echoed unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OtherId(pub String);

impl Serialize for OtherId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v: Value = serde_json::from_str(&self.0).map_err(serde::ser::Error::custom)?;
        v.serialize(s)
    }
}

impl<'de> Deserialize<'de> for OtherId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if v.is_null() {
            return Err(serde::de::Error::custom("null is not an OtherId"));
        }
        Ok(OtherId(v.to_string()))
    }
}

impl Id {
    /// The `null` id.
    pub const fn null() -> Id {
        Id(IdValue::Null)
    }

    /// Build an id from any JSON value.
    pub fn from_value(v: &Value) -> Id {
        match v {
            Value::Null => Id(IdValue::Null),
            Value::String(s) => Id(IdValue::Str(s.clone())),
            Value::Number(n) if n.is_i64() => Id(IdValue::Int(n.as_i64().unwrap_or_default())),
            other => Id(IdValue::Other(OtherId(other.to_string()))),
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The id as a non-negative integer, if it is one.
    pub fn as_u64(&self) -> Option<u64> {
        match self.0 {
            IdValue::Int(i) => u64::try_from(i).ok(),
            _ => None,
        }
    }

    /// Whether this is the `null` id.
    pub fn is_null(&self) -> bool {
        matches!(self.0, IdValue::Null)
    }
}

impl From<u64> for Id {
    fn from(v: u64) -> Id {
        Id(IdValue::Int(i64::try_from(v).unwrap_or(i64::MAX)))
    }
}

impl std::fmt::Display for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.to_value())
    }
}

/// A JSON-RPC error object.
///
/// ```
/// use kaged_plugin_protocol::{ErrorCode, RpcError};
/// let e = RpcError::new(ErrorCode::MethodNotFound, "no such method: foo.bar");
/// assert_eq!(e.code, -32601);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, thiserror::Error)]
#[error("JSON-RPC error {code}: {message}")]
pub struct RpcError {
    /// The numeric code (see [`ErrorCode`]).
    pub code: i64,
    /// A short description.
    pub message: String,
    /// Optional structured details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with one of the spec's codes.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> RpcError {
        RpcError {
            code: code.code(),
            message: message.into(),
            data: None,
        }
    }

    /// Attach `data`.
    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }

    /// The spec's code, if `code` is one.
    pub fn known_code(&self) -> Option<ErrorCode> {
        ErrorCode::from_code(self.code)
    }
}

/// A request: has an `id` and expects a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Request {
    /// Always `"2.0"`.
    pub jsonrpc: Version,
    /// The request id.
    pub id: Id,
    /// The method name.
    pub method: String,
    /// The params (an object for every kaged method).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// A notification: no `id`, never answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Notification {
    /// Always `"2.0"`.
    pub jsonrpc: Version,
    /// The notification name.
    pub method: String,
    /// The params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// A response: the `result` or the `error` of one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Response {
    /// Always `"2.0"`.
    pub jsonrpc: Version,
    /// The id of the request this answers (`null` for parse errors and batches).
    pub id: Id,
    /// `result` or `error`.
    #[serde(flatten)]
    pub payload: ResponsePayload,
}

/// The two mutually exclusive members of a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub enum ResponsePayload {
    /// The method's result.
    #[serde(rename = "result")]
    Result(Value),
    /// The method's error.
    #[serde(rename = "error")]
    Error(RpcError),
}

impl Request {
    /// A request with object params.
    pub fn new(id: impl Into<Id>, method: impl Into<String>, params: Option<Value>) -> Request {
        Request {
            jsonrpc: Version,
            id: id.into(),
            method: method.into(),
            params,
        }
    }
}

impl Notification {
    /// A notification.
    pub fn new(method: impl Into<String>, params: Option<Value>) -> Notification {
        Notification {
            jsonrpc: Version,
            method: method.into(),
            params,
        }
    }
}

impl Response {
    /// A successful response.
    pub fn ok(id: Id, result: Value) -> Response {
        Response {
            jsonrpc: Version,
            id,
            payload: ResponsePayload::Result(result),
        }
    }

    /// An error response.
    pub fn err(id: Id, error: RpcError) -> Response {
        Response {
            jsonrpc: Version,
            id,
            payload: ResponsePayload::Error(error),
        }
    }

    /// The payload as a `Result`.
    pub fn into_result(self) -> Result<Value, RpcError> {
        match self.payload {
            ResponsePayload::Result(v) => Ok(v),
            ResponsePayload::Error(e) => Err(e),
        }
    }
}

/// Any single JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum RpcMessage {
    /// A request (has an id).
    Request(Request),
    /// A notification (no id).
    Notification(Notification),
    /// A response to one of our requests.
    Response(Response),
}

impl Serialize for RpcMessage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RpcMessage::Request(r) => r.serialize(s),
            RpcMessage::Notification(n) => n.serialize(s),
            RpcMessage::Response(r) => r.serialize(s),
        }
    }
}

/// Why a line could not be taken as one message. [`MessageError::answer`]
/// gives the error response the receiver sends back, if any.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MessageError {
    /// Not JSON at all: answered `-32700` with id `null`.
    #[error("parse error: {0}")]
    Parse(String),
    /// A JSON array: batches are forbidden, answered `-32600` with id `null`.
    #[error("batch messages are not supported")]
    Batch,
    /// JSON, but not a valid JSON-RPC 2.0 message; answered `-32600` with
    /// the message's id when it had a usable one (`null` otherwise).
    #[error("invalid request: {reason}")]
    Invalid {
        /// The id found in the message, if any.
        id: Option<Id>,
        /// What is wrong.
        reason: String,
    },
}

impl MessageError {
    /// The error response to send back. Invalid messages that carried no id
    /// and looked like notifications are still answered with id `null`.
    pub fn answer(&self) -> Response {
        match self {
            MessageError::Parse(why) => Response::err(
                Id::null(),
                RpcError::new(ErrorCode::ParseError, format!("Parse error: {why}")),
            ),
            MessageError::Batch => Response::err(
                Id::null(),
                RpcError::new(
                    ErrorCode::InvalidRequest,
                    "Invalid request: batch messages are not supported",
                ),
            ),
            MessageError::Invalid { id, reason } => Response::err(
                id.clone().unwrap_or_else(Id::null),
                RpcError::new(
                    ErrorCode::InvalidRequest,
                    format!("Invalid request: {reason}"),
                ),
            ),
        }
    }
}

impl RpcMessage {
    /// Classify one line of input.
    ///
    /// ```
    /// use kaged_plugin_protocol::{RpcMessage, MessageError};
    /// let m = RpcMessage::from_slice(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
    /// assert!(matches!(m, RpcMessage::Request(_)));
    /// assert_eq!(RpcMessage::from_slice(b"[]"), Err(MessageError::Batch));
    /// ```
    pub fn from_slice(line: &[u8]) -> Result<RpcMessage, MessageError> {
        let value: Value =
            serde_json::from_slice(line).map_err(|e| MessageError::Parse(e.to_string()))?;
        RpcMessage::from_value(value)
    }

    /// Classify an already parsed JSON value.
    pub fn from_value(value: Value) -> Result<RpcMessage, MessageError> {
        let obj = match value {
            Value::Object(o) => o,
            Value::Array(_) => return Err(MessageError::Batch),
            other => {
                return Err(MessageError::Invalid {
                    id: None,
                    reason: format!("expected a JSON object, got {}", json_kind(&other)),
                })
            }
        };
        classify(obj)
    }

    /// The method name, for requests and notifications.
    pub fn method(&self) -> Option<&str> {
        match self {
            RpcMessage::Request(r) => Some(&r.method),
            RpcMessage::Notification(n) => Some(&n.method),
            RpcMessage::Response(_) => None,
        }
    }
}

fn classify(mut obj: Map<String, Value>) -> Result<RpcMessage, MessageError> {
    let id = match obj.get("id") {
        None => None,
        Some(v @ (Value::Null | Value::Number(_) | Value::String(_))) => Some(Id::from_value(v)),
        Some(other) => {
            return Err(MessageError::Invalid {
                id: None,
                reason: format!(
                    "id must be a number, string or null, got {}",
                    json_kind(other)
                ),
            })
        }
    };
    let invalid = |reason: String| MessageError::Invalid {
        id: id.clone(),
        reason,
    };
    match obj.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        Some(other) => return Err(invalid(format!("jsonrpc must be \"2.0\", got {other}"))),
        None => return Err(invalid("missing member \"jsonrpc\"".into())),
    }
    if let Some(method) = obj.remove("method") {
        let Value::String(method) = method else {
            return Err(invalid("method must be a string".into()));
        };
        let params = obj.remove("params");
        if let Some(p) = &params {
            if !(p.is_object() || p.is_array()) {
                return Err(invalid(format!(
                    "params must be an object or an array, got {}",
                    json_kind(p)
                )));
            }
        }
        if obj.contains_key("result") || obj.contains_key("error") {
            return Err(invalid("a request must not carry result or error".into()));
        }
        return Ok(match id {
            Some(id) => RpcMessage::Request(Request {
                jsonrpc: Version,
                id,
                method,
                params,
            }),
            None => RpcMessage::Notification(Notification {
                jsonrpc: Version,
                method,
                params,
            }),
        });
    }
    let Some(id) = id.clone() else {
        return Err(invalid(
            "neither method nor id: not a request or a response".into(),
        ));
    };
    match (obj.remove("result"), obj.remove("error")) {
        (Some(result), None) => Ok(RpcMessage::Response(Response::ok(id, result))),
        (None, Some(error)) => {
            let error: RpcError = serde_json::from_value(error)
                .map_err(|e| invalid(format!("malformed error object: {e}")))?;
            Ok(RpcMessage::Response(Response::err(id, error)))
        }
        (Some(_), Some(_)) => Err(invalid(
            "a response must not carry both result and error".into(),
        )),
        (None, None) => Err(invalid("a response needs result or error".into())),
    }
}

/// A short name for a JSON value's type, for error messages.
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
