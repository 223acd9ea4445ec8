//! Who gets a connection to a listener (`serve`, `metrics --listen`, `cron --listen`): a cap on
//! the connections held at once, sized to leave this process the file descriptors its real work
//! needs (a daemon's commands, their pipes and guards, its store connections), and, at that cap,
//! room made for the newcomer by closing the oldest connection that is serving nothing: one still
//! sending its request's headers, or idle between requests. A thousand slow or idle clients then
//! hold a few dozen descriptors between them and never keep an ordinary client or an
//! orchestrator's probe out: its connection is the newest, and it asks at once. A connection
//! serving a request is never closed for another; when every one is, a newcomer waits in the
//! kernel's queue until one is done.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// At most this many connections at once, whatever the descriptor limit.
const AT_MOST: usize = 64;

/// How many connections a listener of this process holds at once: [`AT_MOST`], or an eighth of
/// the process's descriptor limit when that is less (systemd's default soft limit is 1,024; a
/// container's may be lower), at least 4. The rest are the work's.
pub fn connections_allowed() -> usize {
    let soft = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_or(1_024, |(soft, _)| soft);
    usize::try_from(soft / 8)
        .unwrap_or(AT_MOST)
        .clamp(4, AT_MOST)
}

/// The connections of one listener.
pub struct Admission {
    cap: usize,
    held: Mutex<Held>,
    /// Said when a connection ends: an accept loop waiting for room looks again.
    freed: Notify,
}

#[derive(Default)]
struct Held {
    next_id: u64,
    /// Oldest first.
    open: Vec<Open>,
}

struct Open {
    id: u64,
    serving: Arc<AtomicBool>,
    close: Arc<Notify>,
}

/// One admitted connection: whether it serves a request now (its service says so), and the word
/// that closes it to make room. Dropped when the connection ends, which frees its place.
pub struct Admitted {
    id: u64,
    admission: Arc<Admission>,
    serving: Arc<AtomicBool>,
    close: Arc<Notify>,
}

impl Admission {
    pub fn new(cap: usize) -> Arc<Admission> {
        Arc::new(Admission {
            cap: cap.max(1),
            held: Mutex::new(Held::default()),
            freed: Notify::new(),
        })
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until a connection may be accepted: below the cap, or at it with one serving nothing
    /// (which [`Admission::admit`] then closes). An accept loop calls this before `accept`, so
    /// that what it cannot take waits in the kernel's queue, not in this process.
    pub async fn room(&self) {
        loop {
            let notified = self.freed.notified();
            {
                let held = self.held();
                if held.open.len() < self.cap
                    || held.open.iter().any(|o| !o.serving.load(Ordering::SeqCst))
                {
                    return;
                }
            }
            // Woken when a connection ends; a request's end (a connection going idle) says
            // nothing, so look again at least every 100 ms.
            let _ = tokio::time::timeout(std::time::Duration::from_millis(100), notified).await;
        }
    }

    /// Admits a connection just accepted: at the cap, the oldest one serving nothing is told to
    /// close (it goes at once; its place is this one's).
    pub fn admit(self: &Arc<Self>) -> Admitted {
        let mut held = self.held();
        if held.open.len() >= self.cap
            && let Some(idle) = held
                .open
                .iter()
                .position(|o| !o.serving.load(Ordering::SeqCst))
        {
            let evicted = held.open.remove(idle);
            evicted.close.notify_one();
        }
        held.next_id += 1;
        let open = Open {
            id: held.next_id,
            serving: Arc::new(AtomicBool::new(false)),
            close: Arc::new(Notify::new()),
        };
        let admitted = Admitted {
            id: open.id,
            admission: self.clone(),
            serving: open.serving.clone(),
            close: open.close.clone(),
        };
        held.open.push(open);
        admitted
    }

    /// How many connections are held now.
    pub fn open(&self) -> usize {
        self.held().open.len()
    }
}

impl Admitted {
    /// Marks the connection as serving a request until the guard is dropped: it is not closed
    /// for a newcomer meanwhile.
    pub fn serving(&self) -> Serving {
        self.serving.store(true, Ordering::SeqCst);
        Serving(self.serving.clone())
    }

    /// The flag [`Admitted::serving`] sets, for a service that outlives a borrow of this.
    pub fn serving_flag(&self) -> Arc<AtomicBool> {
        self.serving.clone()
    }

    /// Completes when the connection is to close to make room for another.
    pub async fn closed(&self) {
        self.close.notified().await;
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.admission.held().open.retain(|o| o.id != self.id);
        self.admission.freed.notify_waiters();
    }
}

/// A request being served (see [`Admitted::serving`]).
pub struct Serving(Arc<AtomicBool>);

impl Serving {
    /// Serving, by the flag of an [`Admitted`] connection.
    pub fn on(flag: &Arc<AtomicBool>) -> Serving {
        flag.store(true, Ordering::SeqCst);
        Serving(flag.clone())
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_cap_the_oldest_idle_connection_makes_room_never_a_busy_one() {
        let admission = Admission::new(2);
        let first = admission.admit();
        let busy = first.serving();
        let second = admission.admit();
        let third = admission.admit();
        // The second (idle) was told to close; the first serves a request and stays.
        assert_eq!(admission.open(), 2);
        let told = second.close.clone();
        let waiting = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async {
                tokio::time::timeout(std::time::Duration::from_millis(50), told.notified())
                    .await
                    .is_ok()
            });
        assert!(waiting, "the idle connection was told to close");
        drop(second);
        assert_eq!(admission.open(), 2);
        drop(busy);
        drop((first, third));
        assert_eq!(admission.open(), 0);
    }

    #[test]
    fn the_cap_leaves_most_descriptors_to_the_work() {
        let allowed = connections_allowed();
        assert!((4..=AT_MOST).contains(&allowed), "{allowed}");
    }
}
