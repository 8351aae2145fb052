//! What a person's terminal shows in the end: a small model of a VT100
//! screen (text, the cursor, the wrap at the last column, erasing and
//! moving), enough to tell what is left on an 80-column screen once a
//! program drew, erased and wrote over its lines; and a run of the binary
//! with the pseudo-terminal as its controlling terminal, so that a Ctrl-C
//! typed there reaches it as a person's does: the terminal echoes `^C` at
//! the cursor and signals the foreground process group.

#![cfg(unix)]

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use unicode_width::UnicodeWidthChar;

use crate::common::Home;

/// A screen `width` columns wide, as tall as it needs to be.
pub struct Screen {
    width: usize,
    rows: Vec<Vec<char>>,
    row: usize,
    col: usize,
    /// The widest any row was ever drawn, in columns.
    pub widest: usize,
}

impl Screen {
    pub fn new(width: usize) -> Screen {
        Screen {
            width,
            rows: vec![Vec::new()],
            row: 0,
            col: 0,
            widest: 0,
        }
    }

    /// The screen once `bytes` were written to it.
    pub fn of(width: usize, bytes: &[u8]) -> Screen {
        let mut screen = Screen::new(width);
        screen.feed(&String::from_utf8_lossy(bytes));
        screen
    }

    /// The rows' text, blank ones in the middle kept, the last ones not.
    pub fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .rows
            .iter()
            .map(|r| r.iter().filter(|c| **c != '\0').collect::<String>())
            .map(|l| l.trim_end().to_owned())
            .collect();
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        lines
    }

    fn line(&mut self) -> &mut Vec<char> {
        while self.rows.len() <= self.row {
            self.rows.push(Vec::new());
        }
        &mut self.rows[self.row]
    }

    fn put(&mut self, c: char) {
        let w = c.width().unwrap_or(0);
        if w == 0 {
            return;
        }
        // The wrap is deferred: a character written in the last column
        // leaves the cursor there; the next one starts a new line.
        if self.col + w > self.width {
            self.row += 1;
            self.col = 0;
        }
        let col = self.col;
        let line = self.line();
        while line.len() < col + w {
            line.push(' ');
        }
        line[col] = c;
        if w == 2 {
            line[col + 1] = '\0';
        }
        self.col += w;
        self.widest = self.widest.max(self.col);
    }

    fn erase_line(&mut self, how: usize) {
        let col = self.col.min(self.width);
        let line = self.line();
        match how {
            0 => line.truncate(col),
            1 => line.iter_mut().take(col + 1).for_each(|c| *c = ' '),
            _ => line.clear(),
        }
    }

    fn feed(&mut self, text: &str) {
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\r' => self.col = 0,
                '\n' => self.row += 1,
                '\u{8}' => self.col = self.col.min(self.width).saturating_sub(1),
                '\u{1b}' => match chars.next() {
                    Some('[') => {
                        let mut params = String::new();
                        let mut last = None;
                        for c in chars.by_ref() {
                            if ('\u{40}'..='\u{7e}').contains(&c) {
                                last = Some(c);
                                break;
                            }
                            params.push(c);
                        }
                        let n = |default: usize| {
                            params
                                .trim_start_matches('?')
                                .split(';')
                                .next()
                                .and_then(|p| p.parse().ok())
                                .unwrap_or(default)
                        };
                        match last {
                            Some('K') => self.erase_line(n(0)),
                            Some('J') if n(0) == 2 => {
                                self.rows.clear();
                                self.row = 0;
                            }
                            Some('A') => self.row = self.row.saturating_sub(n(1)),
                            Some('B') => self.row += n(1),
                            Some('C') => self.col = (self.col + n(1)).min(self.width - 1),
                            Some('D') => self.col = self.col.min(self.width).saturating_sub(n(1)),
                            Some('G') => self.col = n(1).saturating_sub(1),
                            _ => {}
                        }
                    }
                    // An operating system command, to its end.
                    Some(']') => {
                        while let Some(c) = chars.next() {
                            if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some())
                            {
                                break;
                            }
                        }
                    }
                    _ => {}
                },
                c if c.is_control() => {}
                c => self.put(c),
            }
        }
    }
}

/// Runs the binary on a pseudo-terminal of `COLUMNS` x 30 that is its
/// controlling terminal, types Ctrl-C there once what it drew satisfies
/// `ready`, and returns its exit code and every byte the terminal showed.
pub fn ctrl_c_when(
    home: &Home,
    args: &[&str],
    env: &[(&str, &str)],
    ready: impl Fn(&str) -> bool,
) -> (Option<i32>, Vec<u8>) {
    let (slave, mut master) = crate::terminal::terminal();
    let mut cmd = home.crush(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave.try_clone().unwrap()));
    // SAFETY: only async-signal-safe calls between fork and exec: a session
    // of its own, whose controlling terminal standard input then is.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    drop(slave);
    drop(cmd);
    let mut keys = master.try_clone().unwrap();
    let (sender, chunks) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        // EIO once the last slave is closed.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 || sender.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut typed = false;
    while let Ok(chunk) = chunks.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        seen.extend_from_slice(&chunk);
        if !typed && ready(&String::from_utf8_lossy(&seen)) {
            keys.write_all(b"\x03").unwrap();
            typed = true;
        }
    }
    assert!(typed, "never ready: {:?}", String::from_utf8_lossy(&seen));
    let status = child.wait().unwrap();
    reader.join().unwrap();
    (status.code(), seen)
}

#[test]
fn the_screen_wraps_erases_and_moves_as_a_terminal_does() {
    let mut screen = Screen::new(10);
    screen.feed("0123456789\rab\x1b[K\n\r");
    assert_eq!(
        screen.lines(),
        ["ab"],
        "a full line does not wrap until written past"
    );
    let mut screen = Screen::new(10);
    screen.feed("0123456789^C\r\x1b[2Kdone");
    assert_eq!(
        screen.lines(),
        ["0123456789", "done"],
        "^C past the edge wraps"
    );
    let mut screen = Screen::new(10);
    screen.feed("one\r\ntwo\x1b[1A\r\x1b[2Kx\x1b]0;title\x07");
    assert_eq!(screen.lines(), ["x", "two"]);
    assert_eq!(screen.widest, 3);
}
