//! The terminal while top runs: raw mode, the alternate screen, the cursor hidden; and given back
//! (raw mode off, the alternate screen left, the cursor shown) on every way out: `q`, Ctrl-C,
//! SIGTERM, an error (the guard's drop) and a panic (a hook that runs before the panic message
//! is printed, so the message lands on the normal screen).

use std::io::{Stdout, stdout};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::cursor::{Hide, Show};
use crossterm::execute;
use crossterm::terminal::{
    BeginSynchronizedUpdate, Clear, ClearType, EndSynchronizedUpdate, EnterAlternateScreen,
    LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use crate::error::{Error, Result};

/// Whether the screen is top's now (read by the panic hook).
static TAKEN: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// The terminal, taken for top until dropped.
pub struct Screen {
    pub terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl Screen {
    pub fn take() -> Result<Self> {
        HOOK.call_once(|| {
            let before = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                give_back();
                before(info);
            }));
        });
        take_terminal()?;
        let terminal = Terminal::new(CrosstermBackend::new(stdout())).map_err(failed)?;
        Ok(Screen { terminal })
    }

    /// Draws a frame, as one synchronized update (DEC mode 2026): a terminal that knows it shows
    /// the frame whole, never half drawn; others ignore the two sequences.
    pub fn draw(&mut self, render: impl FnOnce(&mut ratatui::Frame)) -> Result<()> {
        execute!(stdout(), BeginSynchronizedUpdate).map_err(failed)?;
        self.terminal.draw(render).map_err(failed)?;
        execute!(stdout(), EndSynchronizedUpdate).map_err(failed)
    }

    /// Gives the terminal back for a while (run-now runs a command on it).
    pub fn lend(&mut self) {
        give_back();
    }

    /// Raw mode alone, on the normal screen: keys a key at a time, after [`Screen::lend`].
    pub fn keys_only(&mut self) -> Result<()> {
        TAKEN.store(true, Ordering::SeqCst);
        enable_raw_mode().map_err(failed)
    }

    /// Takes it again after [`Screen::lend`], drawn whole at the next draw (a new terminal's
    /// buffers are blank, as the alternate screen is: no query of the cursor, which a terminal
    /// may not answer).
    pub fn take_back(&mut self) -> Result<()> {
        take_terminal()?;
        self.terminal = Terminal::new(CrosstermBackend::new(stdout())).map_err(failed)?;
        Ok(())
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        give_back();
    }
}

fn take_terminal() -> Result<()> {
    TAKEN.store(true, Ordering::SeqCst);
    enable_raw_mode().map_err(failed)?;
    execute!(stdout(), EnterAlternateScreen, Clear(ClearType::All), Hide).map_err(failed)
}

/// Raw mode off, the alternate screen left, the cursor shown; once, whoever calls first.
fn give_back() {
    if TAKEN.swap(false, Ordering::SeqCst) {
        let _ = disable_raw_mode();
        let _ = execute!(stdout(), LeaveAlternateScreen, Show);
    }
}

pub fn failed(e: std::io::Error) -> Error {
    Error::Other(format!("cannot draw on the terminal: {e}"))
}
