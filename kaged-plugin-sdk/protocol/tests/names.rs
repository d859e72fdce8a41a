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
fn the_storage_prefix_is_the_specs_hyphens_as_underscores() {
    assert_eq!(names::storage_prefix("oh-my-pi"), "plugin_oh_my_pi_");
    assert_eq!(names::storage_prefix("echo"), "plugin_echo_");
    // Not injective, as the spec writes it: the host's owner registry
    // decides whose a shared name is (kaged-host-storage).
    assert_eq!(
        format!("{}bar_x", names::storage_prefix("foo")),
        format!("{}x", names::storage_prefix("foo-bar"))
    );
}
