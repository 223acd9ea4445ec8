//! One read of the store for the screen: the format check (the server's clock), the jobs under
//! the prefix (SCAN), and every job through the one read model, `store::view` (one pipelined
//! round trip per batch of jobs, never a read per row). It owns its connection, so the loop can
//! go on with keys while a read waits on a server that does not answer.

use std::future::Future;
use std::pin::Pin;

use super::model::Snapshot;
use crate::connection::{ConnectOptions, Connection};
use crate::error::Result;
use crate::store::{discover, format, view};

/// A read in flight: the connection back (None when it broke: the next read opens a new one,
/// as a restarted server needs) and what it found.
pub type Reading = Pin<Box<dyn Future<Output = (Option<Connection>, Result<Snapshot>)>>>;

/// What every read needs.
#[derive(Clone)]
pub struct Source {
    pub options: ConnectOptions,
    pub prefix: String,
    pub pattern: String,
}

impl Source {
    /// Starts a read over `conn` (a new connection when None).
    pub fn read(&self, conn: Option<Connection>) -> Reading {
        let source = self.clone();
        Box::pin(async move {
            let mut conn = match conn {
                Some(conn) => conn,
                None => match Connection::open(&source.options).await {
                    Ok(conn) => conn,
                    Err(e) => return (None, Err(e)),
                },
            };
            match source.read_over(&mut conn).await {
                Ok(snapshot) => (Some(conn), Ok(snapshot)),
                Err(e) => (None, Err(e)),
            }
        })
    }

    async fn read_over(&self, conn: &mut Connection) -> Result<Snapshot> {
        let check = format::check_for_read(conn, &self.prefix).await?;
        let jobs = discover::find_jobs(conn, &self.prefix, &self.pattern).await?;
        let (views, unreadable) = view::read(conn, &self.prefix, &jobs, &check).await?;
        let limits = crate::store::limit::all(conn, &self.prefix, check.server_now_ms).await?;
        let mut snapshot = Snapshot::new(views, unreadable, &check);
        for row in &mut snapshot.jobs {
            let named = row
                .view
                .registry
                .as_ref()
                .map(|r| r.settings.limits.clone())
                .unwrap_or_default();
            row.limits =
                crate::store::limit::named(&limits, &crate::store::limit::names_of(&named));
        }
        Ok(snapshot)
    }
}
