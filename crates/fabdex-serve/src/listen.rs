//! The HTTP listener: accepts connections and hands them to the router,
//! with the bounds a loopback service still needs against a misbehaving
//! client. axum's own `serve` sets none of them: a client that sends half a
//! request header kept its connection forever, and one that announced a
//! huge body was read until it sent it.
//!
//! - A request's header must arrive within [`HEADER_READ_TIMEOUT`]; an idle
//!   keep-alive connection is closed after the same time.
//! - At most [`MAX_CONNECTIONS`] connections are open at once; past that,
//!   new ones wait in the listen backlog until one closes.
//! - A `Content-Length` above the body limit is answered `413` at once,
//!   before any of the body is read; the connection then lingers (up to 2 s
//!   and 4 MB drained) so that the client reads the answer instead of a
//!   reset.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::sync::Semaphore;

/// How long a client may take to send a request's header.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections served at once (requests in flight are bounded separately,
/// by `--max-concurrency`).
pub const MAX_CONNECTIONS: usize = 1024;

/// Serve `app` on `addr` until Ctrl-C; `ready` gets the bound address.
pub(crate) async fn serve(
    addr: &str,
    app: Router,
    max_body_bytes: usize,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let listener =
        tokio::net::TcpListener::bind(addr).await.map_err(|e| anyhow::anyhow!("cannot listen on `{addr}`: {e}"))?;
    ready(listener.local_addr()?);
    let app = app.layer(axum::middleware::from_fn(move |req: Request, next: Next| {
        refuse_announced_oversize(req, next, max_body_bytes)
    }));
    let open = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut shutdown = std::pin::pin!(tokio::signal::ctrl_c());
    loop {
        let slot = tokio::select! {
            slot = open.clone().acquire_owned() => slot?,
            _ = &mut shutdown => return Ok(()),
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of file descriptors and the like: wait, do not spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => return Ok(()),
        };
        let service = TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _slot = slot;
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new()).header_read_timeout(HEADER_READ_TIMEOUT);
            let connection = http.serve_connection(TokioIo::new(stream), service).without_shutdown();
            if let Ok(parts) = connection.await {
                linger(parts.io.into_inner()).await;
            }
        });
    }
}

/// Close a connection so that the client reads our last answer: say we are
/// done writing, then read and drop what the client still sends (a body we
/// refused, say) for a little while. Closing with unread bytes would reset
/// the connection, and a reset can destroy the answer before the client
/// reads it.
async fn linger(mut stream: tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let _ = stream.shutdown().await;
    let drain = async {
        let mut buf = [0u8; 16 * 1024];
        let mut dropped = 0usize;
        while dropped < LINGER_BYTES {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => dropped += n,
            }
        }
    };
    let _ = tokio::time::timeout(LINGER_TIME, drain).await;
}

/// How long, and how much, a closing connection is drained.
const LINGER_TIME: Duration = Duration::from_secs(2);
const LINGER_BYTES: usize = 4 * 1024 * 1024;

/// `413` for a request whose `Content-Length` is over the limit, without
/// reading its body (the router's own limit applies to bodies that do not
/// announce their length).
async fn refuse_announced_oversize(req: Request, next: Next, max_body_bytes: usize) -> Response {
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if announced.is_some_and(|n| n > max_body_bytes as u64) {
        let message = format!("request body of {} bytes is over the limit of {max_body_bytes}", announced.unwrap_or(0));
        let body = serde_json::json!({"error": {"kind": "too-large", "message": message}});
        let mut response =
            axum::response::IntoResponse::into_response((StatusCode::PAYLOAD_TOO_LARGE, axum::Json(body)));
        // The unread body is still on the wire: the connection cannot be reused.
        response.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
        return response;
    }
    next.run(req).await
}
