//! The isolation proof (schema 1.4): what else the kernel ran while the board measured.
//!
//! - Every [`Census`] lists the user-space processes and the kernel threads by name and
//!   says whether anything besides PID 1 and its own workers was in user space
//!   ([`Census::isolated`], [`Census::foreign`]); [`RunResults::isolated`] is the
//!   verdict over the run.
//! - Every step's health record ([`crate::StepHealth`]) carries the interrupts raised
//!   during the step, per source ([`InterruptDelta`], from `/proc/interrupts`).
//! - The kernel command line and the modules loaded are in [`crate::SystemInfo`]
//!   ([`KernelModule`], from `/proc/modules`).

use serde::{Deserialize, Serialize};

use crate::{Census, Process, RunResults};

/// How many interrupts one source raised during a step, summed over the CPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterruptDelta {
    /// The row of `/proc/interrupts` and what it serves: the IRQ number and its action
    /// names (`104 mmc1`), or a named row and its description (`IPI1 Function call
    /// interrupts`, `Err`).
    pub source: String,
    pub count: u64,
}

/// One line of `/proc/modules`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelModule {
    pub name: String,
    /// Memory the module takes, bytes.
    pub size_bytes: u64,
    /// The module's reference count (`None`: the kernel has no module unloading and
    /// prints `-`).
    pub refcount: Option<u32>,
    /// The modules that use this one (`[permanent]` for a module that cannot be unloaded).
    #[serde(default)]
    pub used_by: Vec<String>,
}

impl Census {
    /// A census taken `at` a moment, with its verdict worked out from `user_processes`
    /// ([`Census::foreign_among`]).
    pub fn new(
        at: impl Into<String>,
        mut user_processes: Vec<Process>,
        kernel_thread_names: Vec<String>,
    ) -> Census {
        user_processes.sort_by_key(|p| p.pid);
        let foreign = Census::foreign_among(&user_processes);
        Census {
            at: at.into(),
            kernel_threads: u32::try_from(kernel_thread_names.len()).unwrap_or(u32::MAX),
            user_processes,
            kernel_thread_names,
            isolated: Some(foreign.is_empty()),
            foreign,
        }
    }

    /// The user-space processes that are neither PID 1 nor one of PID 1's own workers.
    ///
    /// A worker is a child of PID 1 (parent 1) with PID 1's `comm`: PID 1 forks its
    /// workers and never `exec`s, so they keep its name. Anything else is foreign: a
    /// kernel usermode helper (parent 2, kthreadd), an orphan of someone else's process
    /// (it would have another name), or PID 1 itself missing.
    pub fn foreign_among(user_processes: &[Process]) -> Vec<Process> {
        let init = user_processes.iter().find(|p| p.pid == 1);
        let mut foreign: Vec<Process> = user_processes
            .iter()
            .filter(|p| p.pid != 1 && !(p.ppid == 1 && init.is_some_and(|i| i.comm == p.comm)))
            .cloned()
            .collect();
        if init.is_none() {
            // Cannot happen on the board (PID 1 takes the census); said rather than hidden.
            foreign.insert(
                0,
                Process {
                    pid: 1,
                    ppid: 0,
                    comm: "(PID 1 missing from the census)".into(),
                },
            );
        }
        foreign
    }

    /// The foreign processes: as recorded, or worked out from the processes for a
    /// document before schema 1.4.
    pub fn offenders(&self) -> Vec<Process> {
        match self.isolated {
            Some(_) => self.foreign.clone(),
            None => Census::foreign_among(&self.user_processes),
        }
    }

    /// True when nothing but PID 1 and its workers was in user space: as recorded, or
    /// worked out for a document before schema 1.4.
    pub fn is_isolated(&self) -> bool {
        self.isolated.unwrap_or_else(|| self.offenders().is_empty())
    }

    /// PID 1's workers alive at the census.
    pub fn workers(&self) -> usize {
        let foreign = self.offenders();
        self.user_processes
            .iter()
            .filter(|p| p.pid != 1 && !foreign.iter().any(|f| f.pid == p.pid))
            .count()
    }
}

/// The run's isolation over every census, for a reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Isolation {
    /// How many censuses the document holds.
    pub censuses: usize,
    /// The verdict: no foreign process in any census (`true` with no census at all is
    /// not claimed: see `censuses`).
    pub isolated: bool,
    /// The most workers seen alive at one census.
    pub max_workers: usize,
    /// The fewest and most kernel threads counted.
    pub kernel_threads: Option<(u32, u32)>,
    /// Every foreign process and the census that saw it.
    pub foreign: Vec<(String, Process)>,
}

impl RunResults {
    /// Adds a census and updates the run's verdict ([`RunResults::isolated`]).
    pub fn push_census(&mut self, c: Census) {
        let ok = c.is_isolated();
        self.isolated = Some(self.isolated.unwrap_or(true) && ok);
        self.census.push(c);
    }

    /// The isolation over every census of the run.
    pub fn isolation(&self) -> Isolation {
        let foreign: Vec<(String, Process)> = self
            .census
            .iter()
            .flat_map(|c| c.offenders().into_iter().map(|p| (c.at.clone(), p)))
            .collect();
        let threads = self.census.iter().map(|c| c.kernel_threads);
        Isolation {
            censuses: self.census.len(),
            isolated: foreign.is_empty() && self.census.iter().all(Census::is_isolated),
            max_workers: self.census.iter().map(Census::workers).max().unwrap_or(0),
            kernel_threads: threads.clone().min().zip(threads.max()),
            foreign,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: u32, ppid: u32, comm: &str) -> Process {
        Process {
            pid,
            ppid,
            comm: comm.into(),
        }
    }

    #[test]
    fn pid1_and_its_workers_are_isolated() {
        let c = Census::new(
            "before-storage",
            vec![p(40, 1, "benchboot-init"), p(1, 0, "benchboot-init")],
            vec!["kthreadd".into(), "kworker/0:0H".into()],
        );
        assert_eq!(c.isolated, Some(true));
        assert!(c.foreign.is_empty());
        assert_eq!(c.kernel_threads, 2);
        assert_eq!(c.user_processes[0].pid, 1, "sorted by pid");
        assert_eq!(c.workers(), 1);
        assert!(!c.only_pid1());
    }

    #[test]
    fn a_usermode_helper_or_a_renamed_child_is_foreign() {
        let c = Census::new(
            "after-storage",
            vec![
                p(1, 0, "benchboot-init"),
                p(77, 2, "modprobe"),
                p(78, 1, "sh"),
                p(79, 1, "benchboot-init"),
            ],
            vec![],
        );
        assert_eq!(c.isolated, Some(false));
        assert_eq!(c.foreign, [p(77, 2, "modprobe"), p(78, 1, "sh")]);
        assert_eq!(c.workers(), 1);
        let mut r = RunResults::new(
            "r".into(),
            benchboot_plan::Plan::example(),
            Default::default(),
        );
        assert_eq!(r.isolated, None, "no census, no claim");
        r.push_census(Census::new("before-storage", vec![p(1, 0, "i")], vec![]));
        assert_eq!(r.isolated, Some(true));
        r.push_census(c);
        r.push_census(Census::new("after-network", vec![p(1, 0, "i")], vec![]));
        assert_eq!(
            r.isolated,
            Some(false),
            "one foreign process taints the run"
        );
        let iso = r.isolation();
        assert!(!iso.isolated);
        assert_eq!(iso.censuses, 3);
        assert_eq!(iso.foreign.len(), 2);
        assert_eq!(iso.foreign[0].0, "after-storage");
    }

    #[test]
    fn pid1_missing_is_not_isolated() {
        let c = Census::new("x", vec![p(5, 1, "benchboot-init")], vec![]);
        assert_eq!(c.isolated, Some(false));
        assert_eq!(c.foreign[0].pid, 1);
    }

    #[test]
    fn old_censuses_get_their_verdict_worked_out() {
        // Schema 1.3: no kernel_thread_names, isolated or foreign.
        let json = r#"{"at":"before-storage","user_processes":[{"pid":1,"ppid":0,"comm":"init"},{"pid":9,"ppid":2,"comm":"hotplug"}],"kernel_threads":40}"#;
        let c: Census = serde_json::from_str(json).unwrap();
        assert_eq!(c.isolated, None);
        assert!(!c.is_isolated());
        assert_eq!(c.offenders(), [p(9, 2, "hotplug")]);
        assert!(c.kernel_thread_names.is_empty());
    }
}
