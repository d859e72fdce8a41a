//! The generated tables of `docs/protocol.md`: error codes, system and
//! storage methods, hooks, memory bounds, audit events and manifest
//! validation rules, all
//! rendered from the enums that the code itself uses ("names are data").
//! A test keeps the document current.

use kaged_plugin_protocol::{methods, ErrorCode, HookName, StorageMethod};

use crate::observe::audit::AuditEvent;
use crate::observe::violation::Violation;
use crate::validate::{Rule, Severity};

/// Marker lines around the generated part of `docs/protocol.md`.
pub const BEGIN_MARKER: &str =
    "<!-- BEGIN GENERATED REFERENCE: kaged_host_core::reference::render -->";
/// See [`BEGIN_MARKER`].
pub const END_MARKER: &str = "<!-- END GENERATED REFERENCE -->";

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The generated reference section, markers included.
pub fn render() -> String {
    let mut out = format!("{BEGIN_MARKER}\n\n");
    out.push_str("### Error codes\n\n| code | name | meaning |\n|---|---|---|\n");
    for c in ErrorCode::ALL {
        out.push_str(&format!(
            "| {} | `{}` | {} |\n",
            c.code(),
            c.name(),
            cell(c.meaning())
        ));
    }
    out.push_str("\n### System methods (daemon → plugin)\n\n| method |\n|---|\n");
    for m in methods::SYSTEM_METHODS {
        out.push_str(&format!("| `{m}` |\n"));
    }
    out.push_str(&format!(
        "\nHost → plugin notification: `{}` (ADDENDUM §8).\n",
        methods::SYSTEM_RATE_LIMITED
    ));
    out.push_str("\n### Storage methods (plugin → daemon)\n\n| method |\n|---|\n");
    for m in StorageMethod::ALL {
        out.push_str(&format!("| `{}` |\n", m.as_str()));
    }
    out.push_str("\n### Lifecycle hooks\n\n| hook | method | fires on |\n|---|---|---|\n");
    for h in HookName::ALL {
        let scope = if h.primary_only() {
            "the primary agent only"
        } else {
            "every agent (per agent)"
        };
        out.push_str(&format!(
            "| `{}` | `{}` | {scope} |\n",
            h.as_str(),
            h.method()
        ));
    }
    out.push_str(
        "\n### Memory bounds (`kaged_host_core::bounds`)\n\nWhat a plugin can make the host hold, and what happens at each bound.\n\n| bound | value | at the bound |\n|---|---|---|\n",
    );
    for (name, value, unit, what) in crate::bounds::ALL {
        out.push_str(&format!("| `{name}` | {value} {unit} | {} |\n", cell(what)));
    }
    out.push_str("\n### Audit events\n\n| event | when (data) |\n|---|---|\n");
    for e in AuditEvent::ALL {
        out.push_str(&format!(
            "| `{}` | {} |\n",
            e.as_str(),
            cell(e.description())
        ));
    }
    out.push_str(
        "\n### Protocol violations (`plugin.protocol_violation`)\n\nBefore `initialized` every violation kills the plugin; after it, only those marked.\n\n| violation_type | kills | when |\n|---|---|---|\n",
    );
    for v in Violation::ALL {
        let kills = if v.is_fatal() { "yes" } else { "no" };
        out.push_str(&format!(
            "| `{}` | {kills} | {} |\n",
            v.as_str(),
            cell(v.description())
        ));
    }
    out.push_str(
        "\n### Manifest validation rules\n\n| rule | severity | checks |\n|---|---|---|\n",
    );
    for r in Rule::ALL {
        let sev = match r.severity() {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        out.push_str(&format!(
            "| `{}` | {sev} | {} |\n",
            r.as_str(),
            cell(r.description())
        ));
    }
    out.push_str(
        "\n### Knob types\n\nEvery knob has `type`, and may have `label`, `description` and `binds_to` (`config.<field>`).\n\n| type | what it is | required fields | optional fields |\n|---|---|---|---|\n",
    );
    for k in crate::validate::KnobType::ALL {
        let fields = |required: bool| {
            let names: Vec<String> = k
                .fields()
                .iter()
                .filter(|(_, r)| *r == required)
                .map(|(n, _)| format!("`{n}`"))
                .collect();
            if names.is_empty() {
                "-".to_string()
            } else {
                names.join(", ")
            }
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            k.as_str(),
            cell(k.description()),
            fields(true),
            fields(false)
        ));
    }
    out.push_str(&format!("\n{END_MARKER}\n"));
    out
}
