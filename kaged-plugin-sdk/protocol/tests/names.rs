//! The name tables agree with the typed protocol values they name.

use kaged_plugin_protocol::{names, HookName, PluginRole};

#[test]
fn hook_and_role_names_match_the_protocol_types() {
    let hooks: Vec<&str> = HookName::ALL.iter().map(|h| h.as_str()).collect();
    assert_eq!(hooks, names::HOOK_NAMES);
    let roles = [
        PluginRole::Observer.as_str(),
        PluginRole::Compactor.as_str(),
    ];
    assert_eq!(roles, names::ROLE_NAMES);
}

#[test]
fn the_storage_prefix_keeps_the_name_and_ends_at_the_first_underscore() {
    assert_eq!(names::storage_prefix("oh-my-pi"), "plugin_oh-my-pi_");
    assert_eq!(names::storage_prefix("echo"), "plugin_echo_");
    assert_eq!(names::legacy_storage_prefix("oh-my-pi"), "plugin_oh_my_pi_");
    // No prefix is a prefix of another's (the spec's `-` → `_` form made
    // `foo`'s `bar_x` and `foo-bar`'s `x` one table).
    let names = ["foo", "foo-bar", "foo-", "foo--bar", "f", "foo-bar-x", "fo"];
    for a in names {
        for b in names {
            let (pa, pb) = (names::storage_prefix(a), names::storage_prefix(b));
            assert_eq!(pb.starts_with(&pa), a == b, "{a} / {b}");
        }
    }
}
