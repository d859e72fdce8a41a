//! The plugin's own request ids: integers increasing from 1 on each
//! connection (`plugin-host.md` Wire protocol: "Request IDs are
//! monotonically increasing integers, scoped per direction. … The
//! plugin's IDs start at 1.").

use kaged_plugin_protocol::Id;

/// The last id the plugin used, to check the next one.
#[derive(Debug, Default)]
pub(crate) struct RequestIds {
    last: Option<u64>,
}

impl RequestIds {
    /// Check the next request's id: `Err` says what is wrong with it. A
    /// wrong id does not reset the count (the next good one must still be
    /// greater than the last good one).
    pub(crate) fn next(&mut self, id: &Id) -> Result<(), String> {
        let Some(n) = id.as_u64() else {
            return Err(format!(
                "request id {id} is not an integer (the plugin's ids are integers from 1)"
            ));
        };
        let verdict = match self.last {
            None if n != 1 => Err(format!("the plugin's first request has id {n}, not 1")),
            Some(last) if n <= last => Err(format!(
                "request id {n} does not increase (the previous request had id {last})"
            )),
            _ => Ok(()),
        };
        if self.last.is_none_or(|last| n > last) {
            self.last = Some(n);
        }
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn id(v: serde_json::Value) -> Id {
        Id::from_value(&v)
    }

    #[test]
    fn ids_must_count_up_from_one() {
        let mut ids = RequestIds::default();
        assert!(ids.next(&id(json!(1))).is_ok());
        assert!(ids.next(&id(json!(2))).is_ok());
        assert!(ids.next(&id(json!(7))).is_ok(), "gaps are allowed");
        let e = ids.next(&id(json!(7))).unwrap_err();
        assert!(e.contains("previous request had id 7"), "{e}");
        let e = ids.next(&id(json!("s"))).unwrap_err();
        assert!(e.contains("not an integer"), "{e}");
        assert!(ids.next(&id(json!(8))).is_ok());
        let mut fresh = RequestIds::default();
        let e = fresh.next(&id(json!(0))).unwrap_err();
        assert!(e.contains("not 1"), "{e}");
    }
}
