//! A fault proxy for the tests: a loopback TCP relay between anarchon and a real server that can
//! delay replies, stall both directions, drop replies (the request still reaches the server) and
//! partition (cut every connection and refuse new ones). Loopback only; it stops with the test.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// What the relay does to the traffic now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Relay everything at once.
    Pass,
    /// Deliver the server's replies this much later (requests go through at once).
    DelayReplies(Duration),
    /// Requests reach the server; its replies are thrown away.
    DropReplies,
    /// Nothing moves either way; what was sent waits until the stall ends.
    Stall,
    /// Every connection is cut and new ones are closed at once.
    Partition,
}

/// A reply to lose once: the first server-to-client chunk that contains these bytes is dropped.
type DropOnce = Arc<Mutex<Option<Vec<u8>>>>;

/// A request to hold once: the first client-to-server chunk that contains the marker waits (the
/// flag says it is held) until [`FaultProxy::release`].
#[derive(Clone, Default)]
struct HoldOnce {
    marker: Arc<Mutex<Option<Vec<u8>>>>,
    held: Arc<std::sync::atomic::AtomicBool>,
    released: Arc<tokio::sync::Notify>,
}

pub struct FaultProxy {
    pub port: u16,
    pub url: String,
    fault: watch::Sender<Fault>,
    drop_once: DropOnce,
    hold_once: HoldOnce,
    _runtime: Arc<Mutex<Option<tokio::runtime::Runtime>>>,
}

impl FaultProxy {
    /// A relay to `127.0.0.1:upstream` on a free loopback port.
    pub fn start(upstream: u16) -> FaultProxy {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (fault, watch) = watch::channel(Fault::Pass);
        let drop_once: DropOnce = Arc::new(Mutex::new(None));
        let hold_once = HoldOnce::default();
        runtime.spawn(accept(
            listener,
            upstream,
            watch,
            drop_once.clone(),
            hold_once.clone(),
        ));
        FaultProxy {
            port,
            url: format!("redis://127.0.0.1:{port}"),
            fault,
            drop_once,
            hold_once,
            _runtime: Arc::new(Mutex::new(Some(runtime))),
        }
    }

    pub fn set(&self, fault: Fault) {
        self.fault.send_replace(fault);
    }

    /// Loses the next reply that contains `marker` (the request it answers was applied), once.
    pub fn drop_next_reply_containing(&self, marker: &[u8]) {
        *self.drop_once.lock().unwrap() = Some(marker.to_vec());
    }

    /// Whether the reply to lose has been lost.
    pub fn dropped(&self) -> bool {
        self.drop_once.lock().unwrap().is_none()
    }

    /// Holds the next request that contains `marker` until [`FaultProxy::release`] (what else
    /// that connection sends waits behind it), once.
    pub fn hold_next_request_containing(&self, marker: &[u8]) {
        *self.hold_once.marker.lock().unwrap() = Some(marker.to_vec());
    }

    /// Whether the request to hold has arrived and is held.
    pub fn holding(&self) -> bool {
        self.hold_once
            .held
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Lets the held request go on.
    pub fn release(&self) {
        self.hold_once.released.notify_one();
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        if let Some(rt) = self._runtime.lock().unwrap().take() {
            rt.shutdown_background();
        }
    }
}

async fn accept(
    listener: TcpListener,
    upstream: u16,
    fault: watch::Receiver<Fault>,
    drop_once: DropOnce,
    hold_once: HoldOnce,
) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            return;
        };
        if *fault.borrow() == Fault::Partition {
            drop(client);
            continue;
        }
        let fault = fault.clone();
        let drop_once = drop_once.clone();
        let hold_once = hold_once.clone();
        tokio::spawn(async move {
            let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)).await else {
                return;
            };
            let (client_read, client_write) = client.into_split();
            let (server_read, server_write) = server.into_split();
            let up = tokio::spawn(pump(
                client_read,
                server_write,
                fault.clone(),
                None,
                Some(hold_once),
            ));
            let down = tokio::spawn(pump(
                server_read,
                client_write,
                fault,
                Some(drop_once),
                None,
            ));
            let _ = tokio::join!(up, down);
        });
    }
}

/// Copies one direction, applying the fault; `drop_once` is given for the server-to-client
/// direction (the replies).
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    to: tokio::net::tcp::OwnedWriteHalf,
    mut fault: watch::Receiver<Fault>,
    drop_once: Option<DropOnce>,
    hold_once: Option<HoldOnce>,
) {
    let replies = drop_once.is_some();
    // Delayed bytes go through a queue so that their order is kept.
    let (queue, mut delayed) =
        tokio::sync::mpsc::unbounded_channel::<(tokio::time::Instant, Vec<u8>)>();
    let to = Arc::new(tokio::sync::Mutex::new(to));
    let writer = {
        let to = to.clone();
        tokio::spawn(async move {
            while let Some((at, bytes)) = delayed.recv().await {
                tokio::time::sleep_until(at).await;
                if to.lock().await.write_all(&bytes).await.is_err() {
                    return;
                }
            }
        })
    };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = tokio::select! {
            read = from.read(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            },
            _ = wait_for(&mut fault, Fault::Partition) => break,
        };
        let bytes = buf[..n].to_vec();
        // A stall holds the bytes until it ends (or a partition cuts the connection).
        loop {
            let now = *fault.borrow_and_update();
            match now {
                Fault::Stall => {
                    if fault.changed().await.is_err() {
                        return;
                    }
                }
                Fault::Partition => {
                    writer.abort();
                    return;
                }
                _ => break,
            }
        }
        if let Some(hold) = &hold_once {
            let matched = {
                let mut marker = hold.marker.lock().unwrap();
                let hit = marker
                    .as_ref()
                    .is_some_and(|m| bytes.windows(m.len()).any(|w| w == m.as_slice()));
                if hit {
                    *marker = None;
                }
                hit
            };
            if matched {
                hold.held.store(true, std::sync::atomic::Ordering::SeqCst);
                // A client that goes while its request is held never sent it, as far as the
                // server can tell: its bytes are thrown away, not delivered after it has gone.
                tokio::select! {
                    () = hold.released.notified() => {}
                    () = gone(&mut from) => break,
                }
            }
        }
        if let Some(once) = &drop_once {
            let mut once = once.lock().unwrap();
            if once
                .as_ref()
                .is_some_and(|m| bytes.windows(m.len()).any(|w| w == m.as_slice()))
            {
                *once = None;
                continue;
            }
        }
        let now = *fault.borrow();
        let at = tokio::time::Instant::now();
        match (now, replies) {
            (Fault::DropReplies, true) => {}
            (Fault::DelayReplies(d), true) => {
                let _ = queue.send((at + d, bytes));
            }
            _ => {
                let _ = queue.send((at, bytes));
            }
        }
    }
    drop(queue);
    if *fault.borrow() == Fault::Partition {
        writer.abort();
    } else {
        let _ = writer.await;
    }
    let _ = to.lock().await.shutdown().await;
}

/// Resolves when the client has closed its side (it sent nothing more); never, once it has sent
/// more (those bytes wait behind the held ones).
async fn gone(from: &mut tokio::net::tcp::OwnedReadHalf) {
    let mut probe = [0u8; 1];
    match from.peek(&mut probe).await {
        Ok(0) | Err(_) => {}
        Ok(_) => std::future::pending().await,
    }
}

async fn wait_for(fault: &mut watch::Receiver<Fault>, wanted: Fault) {
    loop {
        if *fault.borrow_and_update() == wanted {
            return;
        }
        if fault.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
