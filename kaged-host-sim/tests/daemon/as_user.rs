//! The daemon's hostile probes again with `up` run by an ordinary user
//! (issue 45 item 10): colluding plugins under `up`, the connection flood,
//! consent at every start. Each test here runs one test of this binary
//! again, alone, as `nobody` (`support::as_nobody`), when the tests run as
//! root.

use crate::support::as_nobody::rerun;

macro_rules! as_nobody {
    ($name:ident, $test:literal) => {
        #[test]
        fn $name() {
            if kaged_host_core::testing::cage_available_for_blocking($test) {
                rerun($test);
            }
        }
    };
}

as_nobody!(
    nested_grants_under_up_as_an_ordinary_user,
    "nested_grants::a_grant_inside_another_plugins_writable_grant_does_not_start"
);
as_nobody!(
    the_flood_as_an_ordinary_user,
    "flood::the_operator_is_answered_and_a_plugin_restarts_during_a_connection_flood"
);
as_nobody!(
    consent_at_every_start_as_an_ordinary_user,
    "consent::up_does_not_start_a_plugin_whose_manifest_asks_more_than_was_consented"
);
as_nobody!(
    a_widened_manifest_waits_for_consent_as_an_ordinary_user,
    "consent::a_plugin_that_widened_its_manifest_is_not_restarted_until_consent_is_given_again"
);
as_nobody!(
    a_killed_up_leaves_no_cage_behind_as_an_ordinary_user,
    "lifecycle::a_killed_up_leaves_no_cage_behind"
);
