//! The API's accept loop: HTTP/1 served connection by connection (hyper),
//! each one counted in [`Conns`] under the caps of [`ApiLimits`] and
//! watched for the header-read and idle timeouts.
//!
//! * Before each accept the loop waits for room under the total cap
//!   ([`Conns::room`], which sheds the oldest unauthenticated connection);
//!   what waits meanwhile waits in the kernel's backlog, never on a
//!   descriptor of the daemon's.
//! * An accept that fails (out of descriptors: `EMFILE`, `ENFILE`) is
//!   retried after [`API_ACCEPT_RETRY`]; the loop never ends on it.
//! * Each connection's task serves it until the client closes it, its
//!   watchdog finds a timeout passed, or it is shed. Every request carries
//!   its [`Conn`] (a request extension) to the guard, which marks the
//!   connection authenticated when the token is right; a request is in
//!   flight until its answer's body is sent (a stream of server-sent
//!   events stays in flight).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Bytes;
use axum::Router;
use hyper::body::{Body as HttpBody, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper::service::Service;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use kaged_host_core::time::API_ACCEPT_RETRY;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

use super::conns::{Conn, Conns, Expiry, InFlight, Registration};
use super::limits::{ApiLimits, ACCEPT_BATCH};

/// Accept and serve `router` on `listener` under `conns`' limits, until
/// the task is dropped or aborted.
pub async fn accept_loop(listener: TcpListener, router: Router, conns: Arc<Conns>) {
    let mut failing = false;
    let mut batch = 0;
    loop {
        conns.room().await;
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => {
                failing = false;
                accepted
            }
            Err(e) => {
                if !failing {
                    tracing::warn!(error = %e, "the API cannot accept a connection; retrying");
                }
                failing = true;
                tokio::time::sleep(API_ACCEPT_RETRY).await;
                continue;
            }
        };
        let Some(registration) = conns.admit(peer.ip()) else {
            tracing::debug!(%peer, "API connection refused: the peer holds its cap, every one authenticated");
            continue;
        };
        let limits = *conns.limits();
        tokio::spawn(serve_connection(
            stream,
            registration,
            router.clone(),
            limits,
        ));
        // Let the new connections read their requests before more are
        // accepted (a flood of accepts would otherwise shed them unread).
        batch += 1;
        if batch == ACCEPT_BATCH {
            batch = 0;
            tokio::task::yield_now().await;
        }
    }
}

/// Serve one connection until it ends, times out or is shed.
async fn serve_connection(
    stream: TcpStream,
    registration: Registration,
    router: Router,
    limits: ApiLimits,
) {
    let conn = Arc::clone(registration.conn());
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!(error = %e, "TCP_NODELAY not set");
    }
    let io = TokioIo::new(Watched {
        inner: stream,
        conn: Arc::clone(&conn),
    });
    let service = Tracked {
        router: TowerToHyperService::new(router),
        conn: Arc::clone(&conn),
    };
    let served = http1::Builder::new()
        .header_read_timeout(None)
        .serve_connection(io, service)
        .with_upgrades();
    // Biased: bytes already read count before a deadline is checked (on a
    // busy machine the task may first run after its header-read time).
    tokio::select! {
        biased;
        ended = served => {
            if let Err(e) = ended {
                tracing::debug!(peer = %conn.peer(), error = %e, "API connection ended");
            }
        }
        why = watchdog(&conn, &limits) => {
            tracing::debug!(peer = %conn.peer(), ?why, "API connection closed: timed out");
        }
        () = conn.shed() => {}
    }
    drop(registration);
}

/// Wait until the connection's deadline passes with nothing in flight.
async fn watchdog(conn: &Conn, limits: &ApiLimits) -> Expiry {
    loop {
        match conn.deadline(limits) {
            None => conn.quiet().await,
            Some((at, why)) => {
                if tokio::time::Instant::now() >= at {
                    return why;
                }
                tokio::select! {
                    () = tokio::time::sleep_until(at) => {}
                    () = conn.quiet() => {}
                }
            }
        }
    }
}

/// The router, with each request marked in flight on its connection and
/// carrying the connection to the guard.
struct Tracked {
    router: TowerToHyperService<Router>,
    conn: Arc<Conn>,
}

impl Service<hyper::Request<Incoming>> for Tracked {
    type Response = hyper::Response<TrackedBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn call(&self, mut req: hyper::Request<Incoming>) -> Self::Future {
        let in_flight = self.conn.request_started();
        req.extensions_mut().insert(Arc::clone(&self.conn));
        let answer = self.router.call(req);
        Box::pin(async move {
            let response = answer.await?;
            Ok(response.map(|body| TrackedBody {
                body,
                _in_flight: in_flight,
            }))
        })
    }
}

/// An answer's body, its request in flight until the body is dropped
/// (sent, or abandoned with the connection).
struct TrackedBody {
    body: axum::body::Body,
    _in_flight: InFlight,
}

impl HttpBody for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The socket, telling its connection when bytes arrive.
struct Watched {
    inner: TcpStream,
    conn: Arc<Conn>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.conn.read_some();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
