//! What one running peer shares between its threads and with whoever runs it: the live
//! sessions (their address, the board each declared, the routes of their data and HTTP
//! connections), the connections still waiting for their first line counted per
//! address, and the RAM held for HTTP objects against one budget.
//!
//! [`Registry`] is the handle. The peer's own threads register and route through it;
//! `benchboot peer --wifi`'s offer listener asks it which sessions are live from an
//! address, the board each named and the address of this host each came in on
//! ([`Registry::sessions_at`]); tests read its accounting
//! ([`Registry::http_held`], [`Registry::http_peak`]). Every count it keeps is released
//! by a guard's `Drop` ([`Registered`], [`PendingGuard`], [`HttpHold`]), so no path out
//! of a thread, a panic included, leaks a place.

use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use benchboot_results::name::SafeName;

use super::{DataConn, HttpConn, PeerOptions, HTTP_QUEUE, POLL};
use crate::control::MAX_STREAMS;

/// The shared state of one peer (see the module doc). Cheap to clone: every clone is
/// the same registry.
#[derive(Clone, Default)]
pub struct Registry {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("sessions", &self.sessions())
            .field("pending", &self.pending())
            .field("http_held", &self.http_held())
            .finish()
    }
}

#[derive(Default)]
struct Inner {
    sessions: Mutex<HashMap<u64, Slot>>,
    pending: Mutex<Pending>,
    http: Mutex<Budget>,
    /// Signalled whenever HTTP bytes are released or a waiter gives up.
    http_changed: Condvar,
}

/// Connections waiting for their first line.
#[derive(Default)]
struct Pending {
    total: usize,
    by_ip: HashMap<IpAddr, usize>,
}

/// RAM held for HTTP objects, bytes, and the requests waiting for their share.
#[derive(Default)]
struct Budget {
    held: u64,
    peak: u64,
    /// `(bytes, ticket)`: the smallest request first, then the earliest.
    waiting: BTreeSet<(u64, u64)>,
    next_ticket: u64,
}

/// One live session as [`Registry::sessions_at`] tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveSession {
    /// The board name its hello declared (`None`: it declared none).
    pub board: Option<SafeName>,
    /// The address of this host its control connection came in on (the accepted
    /// connection's local address; an IPv4-mapped IPv6 address as its IPv4 one).
    pub local: IpAddr,
}

/// A live session, as the classifier routes its connections.
pub(super) struct Slot {
    pub(super) ip: IpAddr,
    /// The address of this host its control connection came in on.
    pub(super) local: IpAddr,
    /// The board name its hello declared.
    pub(super) board: Option<SafeName>,
    pub(super) data: SyncSender<DataConn>,
    pub(super) http: SyncSender<HttpConn>,
    /// True while the session waits for the board's `GET`.
    pub(super) wants_http: Arc<AtomicBool>,
}

/// `1024 MiB`, or `300 bytes` below one MiB.
fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Registry {
    /// An empty registry, for one peer ([`super::serve_with_registry`]).
    pub fn new() -> Registry {
        Registry::default()
    }

    /// The live sessions from `ip` (an IPv4-mapped IPv6 address counts as its IPv4
    /// address): the board name each hello declared and the address of this host each
    /// came in on. Empty when no session from `ip` is open.
    pub fn sessions_at(&self, ip: IpAddr) -> Vec<LiveSession> {
        let ip = ip.to_canonical();
        self.slots()
            .values()
            .filter(|s| s.ip == ip)
            .map(|s| LiveSession {
                board: s.board.clone(),
                local: s.local,
            })
            .collect()
    }

    /// The board names the live sessions from `ip` declared ([`Registry::sessions_at`]
    /// without the local addresses), `None` for a session that declared none.
    pub fn boards_at(&self, ip: IpAddr) -> Vec<Option<SafeName>> {
        self.sessions_at(ip).into_iter().map(|s| s.board).collect()
    }

    /// Sessions open now.
    pub fn sessions(&self) -> usize {
        self.slots().len()
    }

    /// Connections waiting for their first line now.
    pub fn pending(&self) -> usize {
        lock(&self.inner.pending).total
    }

    /// RAM held for HTTP objects now, bytes: every object from its reservation until
    /// it is freed (its wait for the `GET` over, or its delivery done).
    pub fn http_held(&self) -> u64 {
        lock(&self.inner.http).held
    }

    /// The most RAM ever held for HTTP objects at once, bytes: never above the
    /// peer's [`PeerOptions::http_budget`].
    pub fn http_peak(&self) -> u64 {
        lock(&self.inner.http).peak
    }

    pub(super) fn slots(&self) -> MutexGuard<'_, HashMap<u64, Slot>> {
        lock(&self.inner.sessions)
    }

    /// A place for one more connection from `ip` waiting for its first line, or why
    /// not: the peer's [`PeerOptions::max_pending`] or this address's
    /// [`PeerOptions::max_pending_per_ip`] are taken.
    pub(super) fn admit_pending(
        &self,
        ip: IpAddr,
        o: &PeerOptions,
    ) -> Result<PendingGuard, String> {
        let ip = ip.to_canonical();
        let mut p = lock(&self.inner.pending);
        if p.total >= o.max_pending {
            return Err(format!(
                "{} connections wait for their first line, the most this peer takes",
                p.total
            ));
        }
        let mine = p.by_ip.entry(ip).or_insert(0);
        if *mine >= o.max_pending_per_ip {
            return Err(format!(
                "{mine} connections from {ip} wait for their first line, the most from \
                 one address"
            ));
        }
        *mine += 1;
        p.total += 1;
        Ok(PendingGuard {
            registry: self.clone(),
            ip,
        })
    }

    /// Registers a new session from `ip`, come in on this host's `local` address, that
    /// declared `board`, or says why not (`busy: ...`, which the board retries).
    pub(super) fn register(
        &self,
        ip: IpAddr,
        local: IpAddr,
        board: Option<SafeName>,
        o: &PeerOptions,
    ) -> Result<Registered, String> {
        let ip = ip.to_canonical();
        let mut sessions = self.slots();
        if sessions.len() >= o.max_sessions {
            return Err(format!(
                "busy: this peer serves {} boards at once, the most it takes; retry later",
                sessions.len()
            ));
        }
        let from_ip = sessions.values().filter(|s| s.ip == ip).count();
        if from_ip >= o.max_sessions_per_ip {
            return Err(format!(
                "busy: {from_ip} sessions from {ip} already, the most from one address; \
                 retry later"
            ));
        }
        let mut id = super::new_session_id();
        while id == 0 || sessions.contains_key(&id) {
            id = super::new_session_id();
        }
        let (data_tx, data) = mpsc::sync_channel(MAX_STREAMS as usize);
        let (http_tx, http) = mpsc::sync_channel(HTTP_QUEUE);
        let wants_http = Arc::new(AtomicBool::new(false));
        sessions.insert(
            id,
            Slot {
                ip,
                local: local.to_canonical(),
                board,
                data: data_tx,
                http: http_tx,
                wants_http: wants_http.clone(),
            },
        );
        Ok(Registered {
            registry: self.clone(),
            id,
            data,
            http,
            wants_http,
        })
    }

    /// Reserves `bytes` of the HTTP budget `limit`, waiting until `deadline` for the
    /// objects held now to be freed (checking `gone` every [`POLL`]: the board hung
    /// up). Waiting requests are let in smallest first, then earliest, so a board's
    /// small object is never queued behind a stranger's large ones. Refused at once
    /// when `bytes` alone is more than `limit`; after `deadline` with `busy: ...`.
    pub(super) fn reserve_http(
        &self,
        bytes: u64,
        limit: u64,
        deadline: Instant,
        gone: &dyn Fn() -> bool,
    ) -> Result<HttpHold, String> {
        if bytes > limit {
            return Err(format!(
                "an HTTP object of {} is more than this peer holds at once ({} for every \
                 board together); lower network.tests.http_bytes",
                size(bytes),
                size(limit)
            ));
        }
        let mut b = lock(&self.inner.http);
        let me = (bytes, b.next_ticket);
        b.next_ticket += 1;
        b.waiting.insert(me);
        loop {
            if b.waiting.first() == Some(&me) && b.held + bytes <= limit {
                b.waiting.remove(&me);
                b.held += bytes;
                b.peak = b.peak.max(b.held);
                // The next smallest may fit as well.
                self.inner.http_changed.notify_all();
                return Ok(HttpHold {
                    registry: self.clone(),
                    bytes,
                });
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || gone() {
                b.waiting.remove(&me);
                let held = b.held;
                self.inner.http_changed.notify_all();
                return Err(format!(
                    "busy: other boards' HTTP objects hold {} of this peer's {}; retry later",
                    size(held),
                    size(limit)
                ));
            }
            b = self
                .inner
                .http_changed
                .wait_timeout(b, left.min(POLL))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// A connection's place among those waiting for their first line; freed on drop.
pub(super) struct PendingGuard {
    registry: Registry,
    ip: IpAddr,
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        let mut p = lock(&self.registry.inner.pending);
        p.total = p.total.saturating_sub(1);
        if let Some(n) = p.by_ip.get_mut(&self.ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                p.by_ip.remove(&self.ip);
            }
        }
    }
}

/// A session's own ends of its routes; dropping it removes the session.
pub(super) struct Registered {
    registry: Registry,
    pub(super) id: u64,
    pub(super) data: Receiver<DataConn>,
    pub(super) http: Receiver<HttpConn>,
    pub(super) wants_http: Arc<AtomicBool>,
}

impl Registered {
    pub(super) fn registry(&self) -> &Registry {
        &self.registry
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.registry.slots().remove(&self.id);
    }
}

/// Bytes of the HTTP budget held for one object; given back on drop.
pub(super) struct HttpHold {
    registry: Registry,
    bytes: u64,
}

impl Drop for HttpHold {
    fn drop(&mut self) {
        let inner = &self.registry.inner;
        let mut b = lock(&inner.http);
        b.held = b.held.saturating_sub(self.bytes);
        inner.http_changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    const A: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));

    #[test]
    fn pending_places_are_capped_per_address_and_freed_on_drop() {
        let r = Registry::new();
        let o = PeerOptions {
            max_pending: 5,
            max_pending_per_ip: 3,
            ..PeerOptions::default()
        };
        let a: Vec<_> = (0..3).map(|_| r.admit_pending(A, &o).unwrap()).collect();
        let e = r.admit_pending(A, &o).err().unwrap();
        assert_eq!(
            e,
            "3 connections from 10.0.0.1 wait for their first line, the most from one address"
        );
        // Another address still gets in, up to the total.
        let b: Vec<_> = (0..2).map(|_| r.admit_pending(B, &o).unwrap()).collect();
        assert_eq!(r.pending(), 5);
        let e = r.admit_pending(B, &o).err().unwrap();
        assert!(e.starts_with("5 connections wait"), "{e}");
        drop(a);
        assert_eq!(r.pending(), 2);
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        let again: Vec<_> = (0..3)
            .map(|_| r.admit_pending(mapped, &o).unwrap())
            .collect();
        assert!(
            r.admit_pending(A, &o).is_err(),
            "a mapped address is its IPv4 one"
        );
        drop((b, again));
        assert_eq!(r.pending(), 0);
    }

    #[test]
    fn a_session_is_told_with_its_board_and_the_local_address_it_came_in_on() {
        let r = Registry::new();
        let o = PeerOptions::default();
        let board = SafeName::new(benchboot_results::name::NameKind::Board, "rpi-4b").ok();
        let mapped: IpAddr = "::ffff:10.0.0.2".parse().unwrap();
        let held = r.register(A, mapped, board.clone(), &o).unwrap();
        let unnamed = r.register(A, B, None, &o).unwrap();
        let mut live = r.sessions_at(A);
        live.sort_by_key(|s| s.board.is_none());
        assert_eq!(
            live,
            [
                LiveSession { board, local: B },
                LiveSession {
                    board: None,
                    local: B
                }
            ]
        );
        assert!(r.sessions_at(B).is_empty());
        drop((held, unnamed));
        assert!(r.sessions_at(A).is_empty());
    }

    #[test]
    fn the_budget_is_shared_and_the_smallest_waiting_request_goes_first() {
        let r = Registry::new();
        let never = || false;
        let far = Instant::now() + Duration::from_secs(60);
        let big = r.reserve_http(800, 1000, far, &never).unwrap();
        assert_eq!(r.http_held(), 800);
        // Larger than the budget alone: refused at once.
        let e = r.reserve_http(1001, 1000, far, &never).err().unwrap();
        assert!(e.contains("more than this peer holds at once"), "{e}");
        // A second large one waits; so does a small one that comes later. When the
        // first is freed the small one is let in first (300 of 1000), and the large one
        // (800) only once that is freed too: the order is the registry's, not the
        // threads'.
        let admitted = Arc::new(AtomicUsize::new(0));
        let spawn = |bytes: u64| {
            let (r, admitted) = (r.clone(), admitted.clone());
            std::thread::spawn(move || {
                let hold = r.reserve_http(bytes, 1000, far, &|| false).unwrap();
                admitted.fetch_add(1, Ordering::SeqCst);
                hold
            })
        };
        let waiting = |n: usize| {
            while lock(&r.inner.http).waiting.len() < n {
                assert!(Instant::now() < far, "never queued");
                std::thread::sleep(Duration::from_millis(1));
            }
        };
        let large = spawn(800);
        waiting(1);
        let small = spawn(300);
        waiting(2);
        assert_eq!(admitted.load(Ordering::SeqCst), 0);
        drop(big);
        let small = small.join().unwrap();
        assert_eq!(r.http_held(), 300);
        assert_eq!(
            lock(&r.inner.http)
                .waiting
                .iter()
                .map(|w| w.0)
                .collect::<Vec<_>>(),
            [800],
            "the large one waits"
        );
        assert_eq!(admitted.load(Ordering::SeqCst), 1);
        drop(small);
        let large = large.join().unwrap();
        assert_eq!(r.http_held(), 800);
        assert_eq!(r.http_peak(), 800);
        drop(large);
        assert_eq!(r.http_held(), 0);
        // A waiter whose board hung up gives up, holding nothing.
        let full = r.reserve_http(1000, 1000, far, &never).unwrap();
        let e = r.reserve_http(1, 1000, far, &|| true).err().unwrap();
        assert_eq!(
            e,
            "busy: other boards' HTTP objects hold 1000 bytes of this peer's 1000 bytes; retry later"
        );
        drop(full);
        assert_eq!(r.http_peak(), 1000);
        assert!(lock(&r.inner.http).waiting.is_empty());
    }
}
