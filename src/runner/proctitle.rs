//! A forked process's own line in `ps`: the guard is a fork of anarchon without exec (see
//! [`super::guard`]), so it would show the daemon's whole command line and look like a second
//! daemon. Its command line is rewritten in place, as nginx and PostgreSQL name their workers:
//! the kernel shows `/proc/PID/cmdline` from the process's own argument memory, which a process
//! may overwrite. The memory's bounds come from `/proc/self/stat` (`arg_start`..`env_end`, Linux
//! 3.5 and later): nothing is captured at start-up, and no libc trick is needed. Re-executing the
//! binary instead would break the guard when an upgrade replaces it on disk.
//!
//! The title is prepared before the fork ([`Title::prepare`] allocates and reads a file) and
//! written after it ([`Title::apply`] only copies bytes: async-signal-safe). The environment's
//! strings, after the arguments, give the room a long title needs; the guard never reads its
//! environment, and the parent's memory is its own (copy-on-write).

/// A command line to write over this process's own, with where it goes.
pub struct Title {
    /// The start of the argument memory.
    at: usize,
    /// The title, then NULs to the end of the memory that was used (no old text shows through).
    bytes: Vec<u8>,
}

impl Title {
    /// `title` as the process's command line, cut to the room there is: one string, as
    /// setproctitle(3) writes it (a title longer than the arguments' memory goes on into the
    /// environment's, and the kernel shows it up to its first NUL). None where the bounds cannot
    /// be read (not Linux, an old kernel).
    pub fn prepare(title: &str) -> Option<Title> {
        let (arg_start, arg_end, env_start, env_end) = bounds()?;
        // The environment's strings follow the arguments' on every Linux stack; use them only then.
        let end = if env_start == arg_end && env_end > env_start {
            env_end
        } else {
            arg_end
        };
        let room = end.checked_sub(arg_start)?;
        let mut bytes = title.as_bytes().to_vec();
        // The last byte stays NUL: the title ends there at the latest.
        bytes.truncate(room.saturating_sub(1));
        bytes.resize(room, 0);
        Some(Title {
            at: arg_start,
            bytes,
        })
    }

    /// Writes the title over the process's command line. Async-signal-safe: a copy, no allocation.
    pub fn apply(&self) {
        let (at, text, room) = self.parts();
        // SAFETY: `at..at + room` is this process's argument and environment memory, as the
        // kernel reported it: mapped and writable (the initial stack). Nothing in the forked guard
        // reads it after this (its arguments and environment are not used).
        unsafe { Title::apply_parts(at, text, room) }
    }

    /// Where the title goes, its text (without the NULs after it) and the room it fills: what a
    /// process forked from this one (the guards' spawner) needs to write it
    /// ([`Title::apply_parts`]).
    pub fn parts(&self) -> (usize, &[u8], usize) {
        let text = self.bytes.split(|b| *b == 0).next().unwrap_or_default();
        (self.at, text, self.bytes.len())
    }

    /// [`Title::apply`] from its parts, in a process forked from the one that prepared them (the
    /// same memory layout): `text`, then NULs to `room`. Async-signal-safe.
    ///
    /// # Safety
    /// `at..at + room` must be the argument memory [`Title::prepare`] found in the process this one
    /// was forked from, and `text` no longer than `room`.
    pub unsafe fn apply_parts(at: usize, text: &[u8], room: usize) {
        let text = &text[..text.len().min(room.saturating_sub(1))];
        // SAFETY: as the caller promises; the bytes written stay inside `at..at + room`.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), at as *mut u8, text.len());
            std::ptr::write_bytes((at + text.len()) as *mut u8, 0, room - text.len());
        }
    }
}

/// `arg_start`, `arg_end`, `env_start` and `env_end` of this process (`proc_pid_stat(5)` fields
/// 48 to 51).
fn bounds() -> Option<(usize, usize, usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command's name, which may hold spaces and parentheses: field 3 first.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3)?.parse::<usize>().ok().filter(|v| *v > 0);
    let (arg_start, arg_end) = (field(48)?, field(49)?);
    (arg_end > arg_start).then_some((arg_start, arg_end, field(50)?, field(51)?))
}

#[cfg(test)]
mod tests {
    #[test]
    fn this_process_s_argument_memory_is_found() {
        let (arg_start, arg_end, _, _) = super::bounds().expect("Linux 3.5 or later");
        // The first argument is there, NUL-terminated, where the kernel says.
        let first = std::env::args().next().unwrap();
        // SAFETY: reading this process's own argument memory, as reported by the kernel.
        let there = unsafe { std::slice::from_raw_parts(arg_start as *const u8, first.len()) };
        assert_eq!(there, first.as_bytes());
        assert!(arg_end - arg_start > first.len());
    }
}
