//! The clock the supervisor's restart policy reads and waits on: the real
//! one (tokio's), or a [`ManualClock`] a test advances by hand, so that the
//! backoff sequence (1 s, 2 s, 4 s … 60 s) and the `failed` verdict after
//! 5 failures in 10 minutes are checked without waiting in real time.
//!
//! ```
//! # tokio_test_block_on(async {
//! use std::time::Duration;
//! use kaged_host_core::time::clock::{Clock, ManualClock};
//!
//! let manual = ManualClock::new();
//! let clock = Clock::Manual(manual.clone());
//! let t0 = clock.now();
//! let sleeper = tokio::spawn({
//!     let clock = clock.clone();
//!     async move { clock.sleep(Duration::from_secs(60)).await }
//! });
//! // The sleep is announced, then ends once the clock is advanced past it.
//! assert_eq!(manual.next_sleep(Duration::from_secs(5)).await, Some(Duration::from_secs(60)));
//! manual.advance(Duration::from_secs(60));
//! sleeper.await.unwrap();
//! assert_eq!(clock.now() - t0, Duration::from_secs(60));
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
//! # }
//! ```

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// Where the time comes from.
#[derive(Debug, Clone, Default)]
pub enum Clock {
    /// tokio's clock (real time).
    #[default]
    Real,
    /// Time that moves only when a test advances it.
    Manual(ManualClock),
}

impl Clock {
    /// Now.
    pub fn now(&self) -> Instant {
        match self {
            Clock::Real => Instant::now(),
            Clock::Manual(m) => m.now(),
        }
    }

    /// Wait `d` on this clock.
    pub async fn sleep(&self, d: Duration) {
        match self {
            Clock::Real => tokio::time::sleep(d).await,
            Clock::Manual(m) => m.sleep(d).await,
        }
    }
}

/// A clock that stands still until [`ManualClock::advance`]; it announces
/// every sleep begun on it ([`ManualClock::next_sleep`]).
#[derive(Debug, Clone)]
pub struct ManualClock {
    base: Instant,
    /// Time elapsed since `base`.
    elapsed: Arc<watch::Sender<Duration>>,
    sleeps_tx: mpsc::UnboundedSender<Duration>,
    sleeps_rx: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<Duration>>>,
    /// Serialises `advance` so two advances never lose one.
    advancing: Arc<Mutex<()>>,
}

impl Default for ManualClock {
    fn default() -> Self {
        ManualClock::new()
    }
}

impl ManualClock {
    /// A clock standing at "now".
    pub fn new() -> ManualClock {
        let (sleeps_tx, sleeps_rx) = mpsc::unbounded_channel();
        ManualClock {
            base: Instant::now(),
            elapsed: Arc::new(watch::channel(Duration::ZERO).0),
            sleeps_tx,
            sleeps_rx: Arc::new(tokio::sync::Mutex::new(sleeps_rx)),
            advancing: Arc::new(Mutex::new(())),
        }
    }

    /// The clock's now.
    pub fn now(&self) -> Instant {
        self.base + *self.elapsed.borrow()
    }

    /// Move the clock forward by `d`, ending every sleep that is due.
    pub fn advance(&self, d: Duration) {
        let _g = self.advancing.lock().unwrap_or_else(|p| p.into_inner());
        let next = *self.elapsed.borrow() + d;
        self.elapsed.send_replace(next);
    }

    /// The next sleep begun on this clock (its duration), waiting at most
    /// `limit` of real time for one; `None` when none began.
    pub async fn next_sleep(&self, limit: Duration) -> Option<Duration> {
        let mut rx = self.sleeps_rx.lock().await;
        tokio::time::timeout(limit, rx.recv()).await.ok().flatten()
    }

    async fn sleep(&self, d: Duration) {
        let mut rx = self.elapsed.subscribe();
        let due = *rx.borrow() + d;
        // The receiver lives in `self`: the send cannot fail.
        let _ = self.sleeps_tx.send(d);
        // `wait_for` ends at once when the sender is gone; it is held by
        // `self` for as long as this future lives.
        let _ = rx.wait_for(|elapsed| *elapsed >= due).await;
    }
}
