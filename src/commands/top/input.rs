//! Keys: what each one does to the [`App`], and the work it leaves for the loop (an [`Effect`]):
//! a command to run, logs to read, the end.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::model::{Action, App, Dialog, Request, Stage, View};
use crate::output::Tone;
use crate::store::Layout;

/// What the loop does after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    None,
    Quit,
    /// Run the command of a confirmed action (release, pause, resume) and show its answer.
    Act(Request),
    /// Leave the screen and run `run-now` in the terminal.
    RunNow(Request),
    /// Read the job's last failure (`anarchon logs`) into the logs view.
    Logs {
        job: String,
        layout: Layout,
    },
}

/// Applies `key` to the app.
pub fn handle(app: &mut App, key: KeyEvent) -> Effect {
    if key.kind == KeyEventKind::Release {
        return Effect::None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl && matches!(key.code, KeyCode::Char('c' | 'C')) {
        return Effect::Quit;
    }
    if app.dialog.is_some() {
        return in_dialog(app, key);
    }
    if app.editing_filter {
        return in_filter(app, key);
    }
    match app.view {
        View::Help => {
            match key.code {
                KeyCode::Char('q') => return Effect::Quit,
                KeyCode::Esc | KeyCode::Char('?') | KeyCode::Enter | KeyCode::Backspace => {
                    app.view = app.back_to
                }
                KeyCode::Up | KeyCode::Char('k') => {
                    app.help_scroll = app.help_scroll.saturating_sub(1)
                }
                // Kept within the text when drawn.
                KeyCode::Down | KeyCode::Char('j') => app.help_scroll += 1,
                _ => {}
            }
            Effect::None
        }
        View::Logs => in_logs(app, key),
        View::Jobs | View::Job => in_lists(app, key),
    }
}

fn in_dialog(app: &mut App, key: KeyEvent) -> Effect {
    let Some(dialog) = app.dialog.as_mut() else {
        return Effect::None;
    };
    if key.code == KeyCode::Esc {
        app.dialog = None;
        app.say("cancelled; nothing was changed", Tone::Dim);
        return Effect::None;
    }
    match dialog.stage {
        Stage::Text => {
            match key.code {
                KeyCode::Enter => {
                    if matches!(dialog.action, Action::RunNow { .. })
                        && dialog.text.trim().is_empty()
                    {
                        // Nothing to run: say so where the person looks.
                        return Effect::None;
                    }
                    dialog.stage = Stage::Confirm;
                }
                KeyCode::Backspace => {
                    dialog.text.pop();
                }
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                    dialog.text.push(c)
                }
                _ => {}
            }
            Effect::None
        }
        Stage::Confirm => match key.code {
            KeyCode::Char('y' | 'Y') => {
                let Some(dialog) = app.dialog.take() else {
                    return Effect::None;
                };
                let text = Some(dialog.text.trim().to_string()).filter(|t| !t.is_empty());
                let request = Request {
                    action: dialog.action,
                    text,
                };
                if matches!(request.action, Action::RunNow { .. }) {
                    Effect::RunNow(request)
                } else {
                    Effect::Act(request)
                }
            }
            KeyCode::Char('n' | 'N' | 'q') => {
                app.dialog = None;
                app.say("not confirmed; nothing was changed", Tone::Dim);
                Effect::None
            }
            _ => Effect::None,
        },
    }
}

fn in_filter(app: &mut App, key: KeyEvent) -> Effect {
    match key.code {
        KeyCode::Enter => app.editing_filter = false,
        KeyCode::Esc => {
            app.editing_filter = false;
            app.filter.clear();
        }
        KeyCode::Backspace => {
            app.filter.pop();
        }
        KeyCode::Up => app.move_by(-1),
        KeyCode::Down => app.move_by(1),
        KeyCode::Char(c) => app.filter.push(c),
        _ => {}
    }
    // The selection stays on a row the filter shows (the first one when it hid the selected job).
    if app
        .rows()
        .iter()
        .all(|r| Some(&r.key()) != app.selected.as_ref())
    {
        app.move_to_end(false);
    }
    Effect::None
}

fn in_logs(app: &mut App, key: KeyEvent) -> Effect {
    // Kept within the text when drawn.
    let scroll = &mut app.logs.scroll;
    match key.code {
        KeyCode::Char('q') => return Effect::Quit,
        KeyCode::Esc | KeyCode::Enter | KeyCode::Char('l') | KeyCode::Backspace => {
            app.view = app.back_to
        }
        KeyCode::Up | KeyCode::Char('k') => *scroll = scroll.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => *scroll += 1,
        KeyCode::PageUp => *scroll = scroll.saturating_sub(app.page),
        KeyCode::PageDown | KeyCode::Char(' ') => *scroll += app.page,
        KeyCode::Home | KeyCode::Char('g') => *scroll = 0,
        KeyCode::End | KeyCode::Char('G') => *scroll = usize::MAX / 2,
        _ => {}
    }
    Effect::None
}

/// The jobs view and the job view: moving, opening, and the actions.
fn in_lists(app: &mut App, key: KeyEvent) -> Effect {
    let in_job = app.view == View::Job;
    match key.code {
        KeyCode::Char('q') => return Effect::Quit,
        KeyCode::Char('?') => {
            app.back_to = app.view;
            app.view = View::Help;
        }
        KeyCode::Up | KeyCode::Char('k') if in_job => move_run(app, -1),
        KeyCode::Down | KeyCode::Char('j') if in_job => move_run(app, 1),
        KeyCode::Up | KeyCode::Char('k') => app.move_by(-1),
        KeyCode::Down | KeyCode::Char('j') => app.move_by(1),
        KeyCode::PageUp if !in_job => app.move_by(-(app.page as isize)),
        KeyCode::PageDown if !in_job => app.move_by(app.page as isize),
        KeyCode::Home | KeyCode::Char('g') if !in_job => app.move_to_end(false),
        KeyCode::End | KeyCode::Char('G') if !in_job => app.move_to_end(true),
        KeyCode::Enter if !in_job => match app.selected_job() {
            Some(_) => {
                app.view = View::Job;
                app.run_cursor = 0;
            }
            None => unreadable_said(app),
        },
        KeyCode::Esc if in_job => app.view = View::Jobs,
        KeyCode::Esc => app.filter.clear(),
        KeyCode::Char('/') => {
            app.view = View::Jobs;
            app.editing_filter = true;
        }
        KeyCode::Char('l') => {
            let Some(job) = app.selected_job() else {
                unreadable_said(app);
                return Effect::None;
            };
            let (job, layout) = (job.view.job.clone(), job.view.layout);
            app.logs = super::model::LogsPane {
                job: job.clone(),
                lines: None,
                scroll: 0,
            };
            app.back_to = app.view;
            app.view = View::Logs;
            return Effect::Logs { job, layout };
        }
        KeyCode::Char('r') => ask(app, release(app, in_job)),
        KeyCode::Char('p') => ask(app, pause_or_resume(app)),
        KeyCode::Char('n') => ask(app, run_now(app)),
        _ => {}
    }
    Effect::None
}

fn unreadable_said(app: &mut App) {
    if let Some(u) = app.snapshot.as_ref().and_then(|s| {
        s.unreadable
            .iter()
            .find(|u| Some(&(u.job.clone(), u.layout)) == app.selected.as_ref())
    }) {
        let text = format!("{} is unreadable: {}", u.job, u.error);
        app.say(text, Tone::Bad);
    }
}

fn move_run(app: &mut App, by: isize) {
    let runs = app.selected_job().map_or(0, |j| j.view.in_progress.len());
    app.run_cursor = app
        .run_cursor
        .saturating_add_signed(by)
        .min(runs.saturating_sub(1));
}

/// Opens the dialog of `action`, or says why there is none.
fn ask(app: &mut App, action: Result<Action, String>) {
    if let Some(busy) = &app.busy {
        let text = format!("{busy} is still running; one action at a time");
        app.say(text, Tone::Warn);
        return;
    }
    match action {
        Ok(action) => app.dialog = Some(Dialog::new(action)),
        Err(why) => app.say(why, Tone::Warn),
    }
}

/// The run `r` releases: the selected one in the job view, else the job's only one.
fn release(app: &App, in_job: bool) -> Result<Action, String> {
    let job = app.selected_job().ok_or("no job is selected")?;
    if job.view.layout != Layout::Lease {
        return Err(format!(
            "{} is a claim-only job: its runs hold no lease to release",
            job.view.job
        ));
    }
    let runs = job.runs_in_progress();
    let run = match (runs.len(), in_job) {
        (0, _) => return Err(format!("{} has no run in progress", job.view.job)),
        (_, true) => runs[app.run_cursor.min(runs.len() - 1)],
        (1, false) => runs[0],
        (n, false) => {
            return Err(format!(
                "{} has {n} runs in progress: open it (Enter), pick one, then r",
                job.view.job
            ));
        }
    };
    Ok(Action::Release {
        job: job.view.job.clone(),
        slot: run.slot,
        attempt: run.attempt,
        runner: run.runner.clone(),
        lease_end: run.lease_end,
    })
}

/// `p`: pause a job that is not paused, resume one that is.
fn pause_or_resume(app: &App) -> Result<Action, String> {
    let job = app.selected_job().ok_or("no job is selected")?;
    if job.view.layout != Layout::Lease {
        return Err(format!(
            "{} is a claim-only job: pause is a lease strategy's",
            job.view.job
        ));
    }
    let name = job.view.job.clone();
    Ok(if job.paused(app.now()) {
        Action::Resume { job: name }
    } else {
        Action::Pause { job: name }
    })
}

/// `n`: a manual run; a claim-only job's strategy comes from the job registry.
fn run_now(app: &App) -> Result<Action, String> {
    let job = app.selected_job().ok_or("no job is selected")?;
    let strategy = match job.view.layout {
        Layout::Lease => None,
        Layout::ClaimOnly => Some(
            job.view
                .registry
                .as_ref()
                .map(|r| r.settings.strategy.clone())
                .filter(|s| !s.is_empty() && s != "lease")
                .ok_or_else(|| {
                    format!(
                        "{}'s strategy is not recorded: run `anarchon run-now {} --strategy NAME -- CMD` in a shell",
                        job.view.job, job.view.job
                    )
                })?,
        ),
    };
    Ok(Action::RunNow {
        job: job.view.job.clone(),
        strategy,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::top::model::Snapshot;
    use crate::store::state::RunState;
    use crate::store::view::JobView;

    fn press(app: &mut App, code: KeyCode) -> Effect {
        handle(app, KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn typed(app: &mut App, text: &str) {
        for c in text.chars() {
            press(app, KeyCode::Char(c));
        }
    }

    fn app_with_a_run() -> App {
        let now = 1_800_000_000_000;
        let mut held = JobView::unread("held", Layout::Lease);
        held.in_progress.push(RunState {
            slot: now - 60_000,
            status: crate::store::RunStatus::Running,
            attempt: 2,
            token: "t".into(),
            runner: "host-b:77".into(),
            lease_end: now + 20_000,
            claimed_at: now - 60_000,
            started_at: now - 60_000,
            finished_at: None,
            kind: crate::store::RunKind::Scheduled,
            lease_ms: None,
            fence: None,
        });
        let mut app = App::new("cron:", "redis://x", false);
        app.apply(Snapshot::at(
            vec![held, JobView::unread("idle", Layout::Lease)],
            Vec::new(),
            now,
            std::time::Instant::now(),
            Some(1),
        ));
        // idle (no schedule: unknown) sorts before held (running), as `list --sort health`.
        assert_eq!(app.selected_job().unwrap().view.job, "idle");
        press(&mut app, KeyCode::Down);
        app
    }

    #[test]
    fn a_release_asks_for_a_reason_then_y_or_n() {
        let mut app = app_with_a_run();
        assert_eq!(app.selected_job().unwrap().view.job, "held");
        assert_eq!(press(&mut app, KeyCode::Char('r')), Effect::None);
        assert_eq!(app.dialog.as_ref().unwrap().stage, Stage::Text);
        // While the reason is typed, y and n are letters of it.
        typed(&mut app, "hung, INC-1");
        assert_eq!(press(&mut app, KeyCode::Enter), Effect::None);
        assert_eq!(app.dialog.as_ref().unwrap().stage, Stage::Confirm);
        let Effect::Act(request) = press(&mut app, KeyCode::Char('y')) else {
            panic!("no action")
        };
        assert_eq!(request.text.as_deref(), Some("hung, INC-1"));
        assert!(matches!(
            request.action,
            Action::Release { attempt: 2, ref runner, .. } if runner == "host-b:77"
        ));
        assert!(app.dialog.is_none());
        // Refused: nothing to do, and the status line says so.
        press(&mut app, KeyCode::Char('r'));
        press(&mut app, KeyCode::Enter);
        assert_eq!(press(&mut app, KeyCode::Char('n')), Effect::None);
        assert!(app.dialog.is_none());
        assert!(
            app.status
                .as_ref()
                .unwrap()
                .text
                .contains("nothing was changed")
        );
    }

    #[test]
    fn a_job_without_a_run_has_nothing_to_release_and_resume_asks_no_reason() {
        let mut app = app_with_a_run();
        press(&mut app, KeyCode::Up);
        assert_eq!(app.selected_job().unwrap().view.job, "idle");
        press(&mut app, KeyCode::Char('r'));
        assert!(app.dialog.is_none());
        assert_eq!(
            app.status.as_ref().unwrap().text,
            "idle has no run in progress"
        );
        press(&mut app, KeyCode::Char('p'));
        assert!(matches!(
            app.dialog.as_ref().unwrap().action,
            Action::Pause { .. }
        ));
        press(&mut app, KeyCode::Esc);
        assert!(app.dialog.is_none());
    }

    #[test]
    fn run_now_needs_a_command_and_enter_opens_a_job() {
        let mut app = app_with_a_run();
        press(&mut app, KeyCode::Char('n'));
        press(&mut app, KeyCode::Enter);
        assert_eq!(
            app.dialog.as_ref().unwrap().stage,
            Stage::Text,
            "no command, no confirmation"
        );
        typed(&mut app, "./report.sh --full");
        press(&mut app, KeyCode::Enter);
        let Effect::RunNow(request) = press(&mut app, KeyCode::Char('y')) else {
            panic!("no run-now")
        };
        assert_eq!(request.text.as_deref(), Some("./report.sh --full"));
        assert_eq!(press(&mut app, KeyCode::Enter), Effect::None);
        assert_eq!(app.view, View::Job);
        assert_eq!(press(&mut app, KeyCode::Esc), Effect::None);
        assert_eq!(app.view, View::Jobs);
        assert_eq!(press(&mut app, KeyCode::Char('/')), Effect::None);
        typed(&mut app, "idl");
        press(&mut app, KeyCode::Enter);
        assert_eq!(app.selected_job().unwrap().view.job, "idle");
        assert_eq!(app.rows().len(), 1);
        assert_eq!(
            handle(
                &mut app,
                KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)
            ),
            Effect::Quit
        );
        assert_eq!(press(&mut app, KeyCode::Char('q')), Effect::Quit);
    }
}
