//! A bounded cache of rewritten statements, keyed by (plugin prefix, SQL text).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::rewrite::{rewrite, RewriteError, Rewritten};

/// SQL texts longer than this are rewritten every time, never cached.
const MAX_CACHED_SQL_LEN: usize = 16 * 1024;

/// A bounded, approximately least-recently-used cache of [`rewrite`]
/// results. Only successful rewrites are cached (refusals are cheap to
/// recompute and caching them would let a hostile plugin flush the cache
/// with junk). When full, the least recently used quarter is evicted.
#[derive(Debug)]
pub struct RewriteCache {
    capacity: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    tick: u64,
    map: HashMap<String, (Arc<Rewritten>, u64)>,
}

impl RewriteCache {
    /// A cache holding at most `capacity` statements (at least 4).
    pub fn new(capacity: usize) -> RewriteCache {
        RewriteCache {
            capacity: capacity.max(4),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The number of cached statements.
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cached rewrite of `sql` for `prefix`, computing it on a miss.
    pub fn get_or_rewrite(&self, prefix: &str, sql: &str) -> Result<Arc<Rewritten>, RewriteError> {
        if sql.len() > MAX_CACHED_SQL_LEN {
            return guarded_rewrite(prefix, sql).map(Arc::new);
        }
        // The prefix never contains NUL, so the key is unambiguous.
        let key = format!("{prefix}\0{sql}");
        {
            let mut inner = self.lock();
            inner.tick += 1;
            let tick = inner.tick;
            if let Some((hit, used)) = inner.map.get_mut(&key) {
                *used = tick;
                return Ok(Arc::clone(hit));
            }
        }
        let fresh = Arc::new(guarded_rewrite(prefix, sql)?);
        let mut inner = self.lock();
        if inner.map.len() >= self.capacity {
            let mut ticks: Vec<u64> = inner.map.values().map(|(_, t)| *t).collect();
            ticks.sort_unstable();
            let cutoff = ticks.get(ticks.len() / 4).copied().unwrap_or(0);
            inner.map.retain(|_, (_, t)| *t > cutoff);
        }
        let tick = inner.tick;
        inner.map.insert(key, (Arc::clone(&fresh), tick));
        Ok(fresh)
    }
}

/// [`rewrite`], with any panic of the parser turned into an error: a
/// plugin must not be able to take the host down (the tests call the
/// unguarded [`rewrite`], so that a panic would still fail them).
fn guarded_rewrite(prefix: &str, sql: &str) -> Result<Rewritten, RewriteError> {
    std::panic::catch_unwind(|| rewrite(prefix, sql)).unwrap_or_else(|_| {
        Err(RewriteError::Invalid(
            "the SQL could not be analysed".into(),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caches_per_prefix_and_stays_bounded() {
        let cache = RewriteCache::new(8);
        let a = cache
            .get_or_rewrite("plugin_a_", "SELECT * FROM t")
            .unwrap();
        let b = cache
            .get_or_rewrite("plugin_b_", "SELECT * FROM t")
            .unwrap();
        assert_ne!(a.sql, b.sql);
        let a2 = cache
            .get_or_rewrite("plugin_a_", "SELECT * FROM t")
            .unwrap();
        assert!(Arc::ptr_eq(&a, &a2));
        for i in 0..100 {
            cache
                .get_or_rewrite("plugin_a_", &format!("SELECT {i} FROM t"))
                .unwrap();
        }
        assert!(cache.len() <= 8);
        assert!(cache
            .get_or_rewrite("plugin_a_", "SELECT * FROM sqlite_master")
            .is_err());
    }
}
