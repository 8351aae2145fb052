//! Finding the real Crush: named explicitly ([`REAL_CRUSH_ENV`], or
//! `options.provider_real_crush` in the user's global JSON config), else
//! the first `crush` on `PATH` that is not this program (programs compared
//! as files, symlinks followed; `PATHEXT` on Windows), never this program
//! again.
//!
//! Every hand-over puts a marker in Crush's environment ([`MARKER_ENV`]):
//! how many hand-overs led there, the process that made the last one, the
//! fronts in the chain, and the user's own `CATWALK_URL`. A start that
//! finds it knows whether it is a loop ([`Marker::next`]): a "Crush" that
//! is a wrapper finding this program again ends in one line, at once when
//! it `exec`s (the same front in the same process), else after a few
//! nested starts, never a fork bomb; a copy of this program found as Crush
//! skips itself and the fronts before it.

use std::ffi::{OsStr, OsString};
use std::fs::{self, Metadata};
use std::io;
use std::path::{Path, PathBuf};

use super::version::Identity;
use crate::environment::os_string;
use crate::store::digest::{hex, unhex};
use crate::store::paths::{self, EnvLookup};

/// The environment variable that names the real Crush.
pub(crate) const REAL_CRUSH_ENV: &str = "CRUSH_PROVIDER_REAL_CRUSH";
/// The JSON key, under `options`, that names the real Crush.
pub(crate) const REAL_CRUSH_KEY: &str = "provider_real_crush";
/// The marker every hand-over sets.
pub(crate) const MARKER_ENV: &str = "CRUSH_PROVIDER_FRONT";
/// More hand-overs than this nested in one another are a loop: Crush
/// running a tool that starts Crush again nests a few; a wrapper that
/// starts this program again, each time in a new process, nests without
/// end.
pub(crate) const MAX_DEPTH: u32 = 8;

/// The real Crush.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Crush {
    /// Where it was named: [`REAL_CRUSH_ENV`], `options.provider_real_crush`
    /// in a file, or `PATH`.
    pub origin: String,
    /// What it is (the path to start, as found), for the memo of its
    /// version.
    pub identity: Identity,
}

/// Why no Crush is found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Missing {
    /// None on `PATH` besides this program (and fronts like it).
    #[error("no Crush on PATH besides this program")]
    NotOnPath,
    /// The one named (where, which) is no Crush that can run (why).
    #[error("{0} names {path}, which {2}", path = .1.display())]
    Named(String, PathBuf, String),
    /// A loop: Crush as found starts this program again.
    #[error(
        "a loop: Crush as found starts this program again (a wrapper that finds `crush` on PATH?)"
    )]
    Loop,
    /// Where this program is is not known (why): it cannot tell Crush from
    /// itself.
    #[error("cannot tell where this program is ({0}), so not Crush from it")]
    NoSelf(String),
}

/// The marker of a hand-over.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Marker {
    /// Hand-overs so far in this chain.
    pub depth: u32,
    /// The process that made the last one: `exec` keeps it.
    pub pid: u32,
    /// The fronts in the chain: never Crush.
    pub fronts: Vec<PathBuf>,
    /// The user's own `CATWALK_URL` (`None`: unset), which the front
    /// replaced for Crush ([`crate::front::FAILING_CATWALK_URL`]): what a
    /// start in the chain reads in its place.
    pub catwalk_url: Option<OsString>,
}

impl Marker {
    /// The marker a start of this program (`me`, process `pid`) hands on,
    /// after this one it was handed (the default: none): one more
    /// hand-over, `me` among the fronts, the user's own `CATWALK_URL`
    /// (`url`). `None`: a loop, a "Crush" that starts this program again,
    /// as a wrapper looking `crush` up on `PATH` does: `me` handed over from
    /// this very process (the wrapper `exec`s), or too many hand-overs
    /// nested.
    pub(crate) fn next(mut self, me: &Path, pid: u32, url: Option<OsString>) -> Option<Marker> {
        let mine = self.fronts.iter().any(|f| f == me);
        if self.depth >= MAX_DEPTH || (mine && self.pid == pid) {
            return None;
        }
        if !mine {
            self.fronts.push(me.to_path_buf());
        }
        self.depth += 1;
        self.pid = pid;
        self.catwalk_url = url;
        Some(self)
    }

    /// `DEPTH:PID:URL` then `:FRONT` for each front, `URL` `-` for none,
    /// else `=` and its bytes in hex, each front its bytes in hex: no field
    /// holds a `:`, and a front whose path is not UTF-8 still counts its
    /// starts.
    pub(crate) fn encode(&self) -> OsString {
        let hexed = |value: &OsStr| hex(value.as_encoded_bytes());
        let url = self.catwalk_url.as_deref().map(hexed);
        let mut fields = vec![
            self.depth.to_string(),
            self.pid.to_string(),
            url.map_or("-".into(), |url| format!("={url}")),
        ];
        fields.extend(self.fronts.iter().map(|front| hexed(front.as_os_str())));
        fields.join(":").into()
    }

    /// The marker in `value`, when it is one: its depth at least. What
    /// else cannot be read (a front of another version wrote it) is left
    /// out, the depth kept, so that fronts of two versions that start each
    /// other still end at [`MAX_DEPTH`].
    pub(crate) fn parse(value: &OsStr) -> Option<Marker> {
        let text = value.to_string_lossy();
        let mut fields = text.split(':');
        let depth = fields.next()?.parse().ok()?;
        let pid = fields.next().and_then(|pid| pid.parse().ok()).unwrap_or(0);
        let url = fields.next().and_then(|url| unhex(url.strip_prefix('=')?));
        let fronts = fields.filter_map(|front| Some(os_string(&unhex(front)?).into()));
        Some(Marker {
            depth,
            pid,
            fronts: fronts.collect(),
            catwalk_url: url.map(|url| os_string(&url)),
        })
    }
}

/// The real Crush, for a start whose chain holds `fronts`.
pub(crate) fn find(env: EnvLookup, fronts: &[PathBuf]) -> Result<Crush, Missing> {
    let fronts: Vec<Id> = fronts
        .iter()
        .filter_map(|f| program(f).ok())
        .map(|p| p.1)
        .collect();
    // The Crush at `path`, or why it is none.
    let crush = |path: &Path, origin: &str| match program(path)? {
        (_, id) if fronts.contains(&id) => Err("is this program, not Crush".to_owned()),
        (meta, _) => Ok(Crush {
            identity: Identity {
                path: path.to_owned(),
                size: meta.len(),
                modified: super::version::since_epoch(meta.modified()),
            },
            origin: origin.to_owned(),
        }),
    };
    let named = env(REAL_CRUSH_ENV)
        .map(|p| (PathBuf::from(p), REAL_CRUSH_ENV.to_owned()))
        .or_else(|| real_crush(env));
    if let Some((path, origin)) = named {
        let found = match path.is_absolute() {
            false => Err("is not a full path".to_owned()),
            true => crush(&path, &origin),
        };
        return found.map_err(|why| Missing::Named(origin, path, why));
    }
    (paths::on_path(env, "crush").into_iter())
        .find_map(|path| crush(&path, "PATH").ok())
        .ok_or(Missing::NotOnPath)
}

/// The real Crush named by `options.provider_real_crush` in the user's own
/// global JSON config (`$CRUSH_GLOBAL_CONFIG/crush.json`, else
/// `~/.config/crush/crush.json`), and that file. Only there: a project's
/// file must not choose the program every start in it runs, and a crushrc
/// cannot hold it (Crush refuses to start on an `option` it does not know,
/// while it ignores a JSON key it does not know). A file that cannot be
/// read or parsed names none here; the settings, which read it too, say
/// what is wrong with it. With the program, where it is named.
pub(crate) fn real_crush(env: EnvLookup) -> Option<(PathBuf, String)> {
    let file = paths::config_dir(env).ok()?.join("crush.json");
    let (bytes, _) =
        crate::store::file::read_regular(&file, crate::store::file::MAX_FILE_BYTES).ok()??;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let named = value.get("options")?.get(REAL_CRUSH_KEY)?.as_str()?;
    let origin = format!("options.{REAL_CRUSH_KEY} in {}", file.display());
    (!named.is_empty()).then(|| (PathBuf::from(named), origin))
}

/// What a program is compared by: on Unix its device and inode (nothing to
/// resolve, where a start compares several), elsewhere its canonical path.
#[cfg(unix)]
type Id = (u64, u64);
#[cfg(not(unix))]
type Id = PathBuf;

/// The program at `path`, or why it is none: a file that exists and, on
/// Unix, may be executed.
fn program(path: &Path) -> Result<(Metadata, Id), String> {
    let meta = fs::metadata(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => "does not exist".to_string(),
        _ => format!("cannot be read: {}", crate::store::file::io_words(&e)),
    })?;
    if !meta.is_file() {
        return Err("is not a file".into());
    }
    #[cfg(unix)]
    let id = {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        if meta.permissions().mode() & 0o111 == 0 {
            return Err("is not executable".into());
        }
        (meta.dev(), meta.ino())
    };
    #[cfg(not(unix))]
    let id = path
        .canonicalize()
        .map_err(|e| format!("cannot be resolved: {e}"))?;
    Ok((meta, id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn marker(depth: u32, pid: u32, fronts: &[&str]) -> Marker {
        Marker {
            depth,
            pid,
            fronts: fronts.iter().map(PathBuf::from).collect(),
            catwalk_url: None,
        }
    }

    #[test]
    fn the_marker_reads_back_what_it_wrote() {
        let m = marker(2, 41, &["/a/crush", "/c d/crush"]);
        assert_eq!(Marker::parse(&m.encode()), Some(m.clone()));
        for url in ["", "https://u:p@mirror.example:8443/a;b", "file:c:/x"] {
            let with = Marker {
                catwalk_url: Some(url.into()),
                ..m.clone()
            };
            assert_eq!(Marker::parse(&with.encode()), Some(with), "{url}");
        }
        for bad in ["", "x", "-1:run:-:/a", "one:2:-"] {
            assert_eq!(Marker::parse(OsStr::new(bad)), None, "{bad:?}");
        }
    }

    /// A marker of another version (here the list of paths of before the
    /// fronts were in hex) keeps its depth, so that two fronts of different
    /// versions that find each other on PATH still end at MAX_DEPTH; what
    /// cannot be read of it is left out.
    #[test]
    fn a_marker_read_only_in_part_keeps_its_depth() {
        let read = |text: &str| Marker::parse(OsStr::new(text)).unwrap();
        assert_eq!(read("3:1234:-:/a/crush:/b/crush"), marker(3, 1234, &[]));
        assert_eq!(read("5"), marker(5, 0, &[]));
        assert_eq!(read("1:walk:=4:/a"), marker(1, 0, &[]));
        let front = hex(b"/a/crush");
        assert_eq!(
            read(&format!("2:9:zz:{front}:/x")),
            marker(2, 9, &["/a/crush"])
        );
        let deep = read(&format!("{MAX_DEPTH}:1:-:/old/crush"));
        assert_eq!(deep.next(Path::new("/new/crush"), 2, None), None);
    }

    /// A front at a path that is not UTF-8 still counts its starts: a
    /// marker it cannot read would let a loop run without end.
    #[cfg(unix)]
    #[test]
    fn a_front_not_named_in_utf8_is_in_its_marker() {
        use std::os::unix::ffi::OsStringExt;
        let me = PathBuf::from(OsString::from_vec(b"/p/caf\xe9/crush".to_vec()));
        let m = Marker::default().next(&me, 7, Some("https://m.example".into()));
        let m = m.unwrap();
        assert_eq!(Marker::parse(&m.encode()), Some(m));
    }

    #[test]
    fn a_chain_is_a_loop_when_it_runs_too_deep_or_back_in_one_process() {
        let me = Path::new("/a/crush");
        let next = |handed: Option<Marker>, me, pid| handed.unwrap_or_default().next(me, pid, None);
        assert_eq!(next(None, me, 7), Some(marker(1, 7, &["/a/crush"])));
        // A copy of the front found as Crush skips itself and the front
        // before it, in the same process (exec) or not; Crush running a
        // tool that runs `crush` nests one more.
        let copy = marker(1, 7, &["/a/crush"]);
        assert_eq!(
            next(Some(copy.clone()), Path::new("/b/crush"), 7),
            Some(marker(2, 7, &["/a/crush", "/b/crush"]))
        );
        assert_eq!(
            next(Some(copy.clone()), me, 8),
            Some(marker(2, 8, &["/a/crush"]))
        );
        // The same front again in the same process: a wrapper that
        // `exec`s `crush` from PATH, at once.
        assert_eq!(next(Some(copy), me, 7), None);
        let deep = marker(MAX_DEPTH, 7, &["/a/crush"]);
        assert_eq!(next(Some(deep), me, 8), None);
    }

    /// A relative name would be checked in the working folder but started
    /// from wherever the system looks it up (a bare name: on `PATH`, where
    /// this program is): only a full path names a program.
    #[test]
    fn a_crush_is_named_by_its_full_path_only() {
        for named in ["crush", "./crush", "bin/crush"] {
            let vars: HashMap<&str, OsString> = [(REAL_CRUSH_ENV, named.into())].into();
            assert_eq!(
                find(&|k: &str| vars.get(k).cloned(), &[]),
                Err(Missing::Named(
                    REAL_CRUSH_ENV.into(),
                    named.into(),
                    "is not a full path".into()
                )),
                "{named}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_first_crush_on_path_that_is_no_front_is_found() {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let root = tempfile::tempdir().unwrap();
        let dir = |name: &str| {
            let d = root.path().join(name);
            std::fs::create_dir_all(&d).unwrap();
            d
        };
        let (a, b, c, d) = (dir("a"), dir("b"), dir("c"), dir("d"));
        let program = |path: &Path, mode: u32| {
            std::fs::write(path, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        program(&a.join("crush"), 0o755); // the front
        symlink(a.join("crush"), b.join("crush")).unwrap(); // the front again
        program(&c.join("crush"), 0o644); // not executable
        program(&d.join("crush"), 0o755); // Crush
        let front = a.join("crush");
        let path = std::env::join_paths([&a, &b, &c, &dir("empty"), &a, &d]).unwrap();
        let vars: HashMap<&str, OsString> = [("PATH", path)].into();
        let env = |k: &str| vars.get(k).cloned();
        let found = find(&env, std::slice::from_ref(&front)).unwrap();
        assert_eq!(found.identity.path, d.join("crush"));
        assert_eq!(found.origin, "PATH");
        assert_eq!(found.identity.size, "#!/bin/sh\n".len() as u64);
        assert_eq!(
            find(&env, &[front.clone(), found.identity.path]),
            Err(Missing::NotOnPath)
        );
        let vars: HashMap<&str, OsString> = [
            (REAL_CRUSH_ENV, b.join("crush").into_os_string()),
            ("PATH", OsString::new()),
        ]
        .into();
        let env = |k: &str| vars.get(k).cloned();
        assert_eq!(
            find(&env, std::slice::from_ref(&front)),
            Err(Missing::Named(
                REAL_CRUSH_ENV.into(),
                b.join("crush"),
                "is this program, not Crush".into()
            ))
        );
        let vars: HashMap<&str, OsString> =
            [(REAL_CRUSH_ENV, c.join("crush").into_os_string())].into();
        let env = |k: &str| vars.get(k).cloned();
        assert_eq!(
            find(&env, &[front]).unwrap_err().to_string(),
            format!(
                "{REAL_CRUSH_ENV} names {}, which is not executable",
                c.join("crush").display()
            )
        );
    }

    #[test]
    fn the_real_crush_is_named_in_the_global_json_config_only() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().as_os_str().to_owned();
        let env = move |k: &str| (k == "CRUSH_GLOBAL_CONFIG").then(|| dir.clone());
        assert_eq!(real_crush(&env), None);
        let file = root.path().join("crush.json");
        std::fs::write(&file, r#"{"options":{"provider_real_crush":"/opt/crush"}}"#).unwrap();
        assert_eq!(
            real_crush(&env),
            Some((
                PathBuf::from("/opt/crush"),
                format!("options.provider_real_crush in {}", file.display())
            ))
        );
        for other in [
            "{not json",
            r#"{"options":{"provider_real_crush":""}}"#,
            r#"{"options":{"provider_real_crush":1}}"#,
        ] {
            std::fs::write(&file, other).unwrap();
            assert_eq!(real_crush(&env), None, "{other}");
        }
    }
}
