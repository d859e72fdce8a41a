//! The capability grammar, typed: every form parses to its variant and
//! displays back as its canonical string; every broken form names the part
//! of the grammar it breaks.

use kaged_plugin_protocol::capability::{self, Capability, CapabilityErrorKind};
use kaged_plugin_protocol::manifest::{CapabilityEntry, Manifest};

#[test]
fn every_form_parses_and_displays_canonically() {
    let cases = [
        ("read:fs:/opt/x", Capability::ReadFs("/opt/x".into())),
        (
            "read:fs:config:/presets",
            Capability::ReadFs("config:/presets".into()),
        ),
        (
            "write:fs:project:/out",
            Capability::WriteFs("project:/out".into()),
        ),
        (
            "exec:git:/srv/repo",
            Capability::Exec {
                binary: "git".into(),
                path: "/srv/repo".into(),
            },
        ),
        (
            "exec:/usr/bin/rg:/srv",
            Capability::Exec {
                binary: "/usr/bin/rg".into(),
                path: "/srv".into(),
            },
        ),
        (
            "net:api.example.com:443",
            Capability::Net {
                host: "api.example.com".into(),
                port: Some(443),
            },
        ),
        (
            "net:10.0.0.1:*",
            Capability::Net {
                host: "10.0.0.1".into(),
                port: None,
            },
        ),
        (
            "net:[::1]:8080",
            Capability::Net {
                host: "[::1]".into(),
                port: Some(8080),
            },
        ),
        ("net:*", Capability::NetAll),
        ("net:[]", Capability::NetNone),
        ("kaged:storage:read", Capability::StorageRead),
        ("kaged:storage:write", Capability::StorageWrite),
    ];
    for (text, cap) in cases {
        assert_eq!(Capability::parse(text), Ok(cap.clone()), "{text}");
        assert_eq!(cap.to_string(), text);
    }
    assert_eq!(capability::STORAGE_READ, "kaged:storage:read");
    assert_eq!(capability::STORAGE_WRITE, "kaged:storage:write");
}

#[test]
fn broken_forms_name_the_rule_they_break() {
    let cases = [
        ("disk:everything", CapabilityErrorKind::Unknown, "unknown capability `disk:everything`"),
        ("exec:git", CapabilityErrorKind::Unknown, "`exec:git` must be exec:<binary>:<path>"),
        ("net:example.com", CapabilityErrorKind::Unknown, "`net:example.com` must be net:<host>:<port>, net:<host>:*, net:* or net:[]"),
        ("read:fs:relative/x", CapabilityErrorKind::Path, "`read:fs:relative/x`: path `relative/x` must be absolute or start with config:/ or project:/"),
        ("write:fs:/tmp/*.log", CapabilityErrorKind::Path, "`write:fs:/tmp/*.log`: glob patterns are not supported in capabilities"),
        ("exec:my tool:/srv", CapabilityErrorKind::ExecBinary, "`exec:my tool:/srv`: binary `my tool` must be a bare name or an absolute path"),
        ("net:-bad-.com:80", CapabilityErrorKind::NetHost, "`net:-bad-.com:80`: `-bad-.com` is not a host name or IP address"),
        ("net:example.com:0", CapabilityErrorKind::NetPort, "`net:example.com:0`: port `0` must be `*` or 1..=65535"),
        ("net:example.com:+80", CapabilityErrorKind::NetPort, "`net:example.com:+80`: port `+80` must be `*` or 1..=65535"),
    ];
    for (text, kind, message) in cases {
        let err = Capability::parse(text).expect_err(text);
        assert_eq!((err.kind, err.message.as_str()), (kind, message), "{text}");
        assert_eq!(text.parse::<Capability>(), Err(err));
    }
}

#[test]
fn manifest_entries_become_typed_capabilities() {
    let m = Manifest::from_yaml_str(
        "name: x\nversion: 0.1.0\nkaged_api: 1\ndescription: d\ncommand: [./x]\n\
         capabilities:\n  - net: []\n  - kaged:storage:write\n  - read:fs:/opt/x\n",
    )
    .expect("valid manifest");
    let caps: Vec<Capability> = m
        .capabilities
        .iter()
        .map(|e| e.capability().expect("valid capability"))
        .collect();
    assert_eq!(
        caps,
        [
            Capability::NetNone,
            Capability::StorageWrite,
            Capability::ReadFs("/opt/x".into())
        ]
    );
    assert_eq!(
        CapabilityEntry::from(Capability::StorageRead),
        CapabilityEntry::Text("kaged:storage:read".into())
    );
}
