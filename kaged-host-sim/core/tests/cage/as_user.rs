//! The hostile probes (race, mounts, Landlock, net grants, kernel interfaces, seccomp,
//! privileges, tmpfs sizes) again with the host run as an
//! ordinary user (issue 45: "as root and as an ordinary user"). When the
//! tests run as root, each test here runs one probe test of this binary
//! again, alone, under `setpriv` as `nobody` (`support::as_nobody`, which
//! stages the fixtures where that user can read them); run as an ordinary
//! user already, the probes themselves are that run, and these delegate
//! nothing.

use crate::hostile::caged_here;
use crate::support::as_nobody::rerun;

macro_rules! as_nobody {
    ($name:ident, $test:literal) => {
        #[tokio::test]
        async fn $name() {
            if caged_here().await {
                rerun($test);
            }
        }
    };
}

as_nobody!(
    a_swapped_grant_binds_what_was_resolved_as_an_ordinary_user,
    "race::a_grant_swapped_for_a_symlink_before_bwrap_binds_what_was_resolved"
);
as_nobody!(
    every_bind_is_nosuid_and_nodev_as_an_ordinary_user,
    "race::every_bind_is_nosuid_and_nodev"
);
as_nobody!(
    landlock_holds_as_an_ordinary_user,
    "landlock::a_port_grant_reaches_that_port_only_and_no_host_abstract_socket"
);
as_nobody!(
    kernel_settings_cannot_be_written_as_an_ordinary_user,
    "hostile::kernel_settings_cannot_be_written_whatever_the_host_uid"
);
as_nobody!(
    what_docker_masks_cannot_be_read_as_an_ordinary_user,
    "hostile::what_docker_masks_cannot_be_read"
);
as_nobody!(
    no_fd_but_0_1_2_as_an_ordinary_user,
    "hostile::the_plugin_inherits_no_fd_but_0_1_2_caged_or_not"
);
as_nobody!(
    the_cage_root_is_read_only_as_an_ordinary_user,
    "hostile::the_cage_root_is_read_only_and_only_tmp_and_dev_shm_are_writable"
);
as_nobody!(
    no_new_user_namespace_as_an_ordinary_user,
    "hostile::no_new_user_namespace_by_clone_clone3_or_unshare"
);
as_nobody!(
    the_seccomp_profile_holds_as_an_ordinary_user,
    "hostile::the_seccomp_profile_refuses_what_docker_and_flatpak_refuse"
);
as_nobody!(
    no_capability_as_an_ordinary_user,
    "hostile::the_plugin_has_no_capability_and_no_new_privileges"
);
as_nobody!(
    tmp_and_dev_shm_sizes_hold_as_an_ordinary_user,
    "hostile_limits::tmp_and_dev_shm_fill_up_at_their_stated_size"
);
as_nobody!(
    the_plugin_runs_as_the_hosts_ordinary_user,
    "own_uid::the_plugin_runs_as_its_own_uid_never_the_hosts_root"
);
as_nobody!(
    net_grants_hold_as_an_ordinary_user,
    "net::a_port_grant_reaches_that_host_and_port_only"
);
as_nobody!(
    a_localhost_grant_holds_as_an_ordinary_user,
    "net::a_localhost_grant_of_any_port_reaches_every_port_of_the_host_loopback_only"
);
as_nobody!(
    the_landlock_file_rules_hold_as_an_ordinary_user,
    "landlock::every_caged_plugin_runs_under_the_landlock_file_rules"
);
as_nobody!(
    a_left_child_is_seen_as_an_ordinary_user,
    "exit_watch::a_child_left_running_is_seen_however_late_the_watch_looks"
);
as_nobody!(
    an_ended_child_is_not_reported_as_an_ordinary_user,
    "exit_watch::a_child_the_plugin_ended_first_is_not_reported_however_late_the_watch_looks"
);
