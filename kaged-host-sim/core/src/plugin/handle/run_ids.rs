//! [`RequestIds`]: a run's request-id sequence.

use std::sync::Arc;

/// A run's request-id sequence, shared by the clones of one
/// [`HostConfig`](crate::HostConfig) (1, 2, 3, ...).
///
/// ```
/// let ids = kaged_host_core::RequestIds::default();
/// let clone = ids.clone();
/// assert_eq!((ids.next(), clone.next(), ids.next()), (1, 2, 3));
/// ```
#[derive(Debug, Clone, Default)]
pub struct RequestIds(Arc<std::sync::atomic::AtomicU64>);

impl RequestIds {
    /// The next number of the run.
    pub fn next(&self) -> u64 {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1
    }
}
