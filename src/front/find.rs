//! Finding the real Crush: named explicitly ([`REAL_CRUSH_ENV`], or
//! `options.provider_real_crush` in the user's global JSON config), else
//! the first `crush` on `PATH` that is not this program (paths compared
//! canonical, symlinks followed; `PATHEXT` on Windows), never this program
//! again.
//!
//! Every hand-over puts a marker in Crush's environment ([`MARKER_ENV`]):
//! how many hand-overs led there, the process that made the last one, the
//! program it chose and the fronts before it. A start that finds it knows
//! whether it is a loop ([`chain`]): a "Crush" that is a wrapper finding
//! this program again ends with one line, never a fork bomb; a copy of this
//! program chosen as Crush skips itself and the fronts before it.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};

use crate::config;
use crate::store::paths::EnvLookup;

/// The environment variable that names the real Crush.
pub(crate) const REAL_CRUSH_ENV: &str = "CRUSH_PROVIDER_REAL_CRUSH";
/// The marker every hand-over sets: the one variable besides
/// `CRUSH_DISABLE_PROVIDER_AUTO_UPDATE` that the front adds to Crush's
/// environment.
pub(crate) const MARKER_ENV: &str = "CRUSH_PROVIDER_FRONT";
/// More hand-overs than this nested in one another are a loop: Crush
/// running a tool that starts Crush again nests a few; a wrapper that
/// starts this program again, each time in a new process, nests without
/// end.
pub(crate) const MAX_DEPTH: u32 = 8;

/// Where the real Crush was named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    /// [`REAL_CRUSH_ENV`].
    Env,
    /// `options.provider_real_crush` in this file.
    Config(PathBuf),
    /// The search of `PATH`.
    Path,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Env => f.write_str(REAL_CRUSH_ENV),
            Origin::Config(file) => write!(
                f,
                "options.{} in {}",
                config::front::REAL_CRUSH_KEY,
                file.display()
            ),
            Origin::Path => f.write_str("PATH"),
        }
    }
}

/// The real Crush.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Crush {
    /// The path to start, as found.
    pub path: PathBuf,
    /// Its canonical form: what it is compared by and remembered as.
    pub canonical: PathBuf,
    /// Where it was named.
    pub origin: Origin,
}

/// Why no Crush is found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Missing {
    /// None on `PATH` besides this program (and fronts like it).
    NotOnPath,
    /// The one named is not a program that can run (what is wrong).
    Named(Origin, PathBuf, String),
    /// The one named is this program, or a front before it.
    NamedFront(Origin, PathBuf),
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Missing::NotOnPath => f.write_str("no Crush on PATH besides this program"),
            Missing::Named(origin, path, why) => {
                write!(f, "{origin} names {}, which {why}", path.display())
            }
            Missing::NamedFront(origin, path) => write!(
                f,
                "{origin} names {}, which is this program, not Crush",
                path.display()
            ),
        }
    }
}

/// The marker of the hand-over that led to this start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Marker {
    /// Hand-overs so far in this chain.
    pub depth: u32,
    /// The process that made the last one (with `exec`, this one).
    pub pid: u32,
    /// Whether it only asked for the version (`--version`).
    pub probe: bool,
    /// The program it chose as Crush (canonical).
    pub chosen: PathBuf,
    /// The fronts in the chain (canonical): never Crush.
    pub fronts: Vec<PathBuf>,
    /// The user's own `CATWALK_URL` (`None`: unset), which the front
    /// replaced for Crush ([`crate::front::FAILING_CATWALK_URL`]): what a
    /// start in the chain reads in its place.
    pub catwalk_url: Option<OsString>,
}

impl Marker {
    /// `DEPTH:PID:run|probe:URL:` then the chosen program and the fronts
    /// as a `PATH`-style list (`:` or `;`). `URL` is `-` for none, else `=`
    /// and its bytes in hex, which hold no separator. Paths that cannot be
    /// listed so (one holding the separator) are left out: the depth still
    /// ends a loop.
    pub(crate) fn encode(&self) -> OsString {
        let kind = if self.probe { "probe" } else { "run" };
        let url = match &self.catwalk_url {
            None => "-".to_owned(),
            Some(url) => format!("={}", crate::store::digest::hex(&os_bytes(url))),
        };
        let mut value = OsString::from(format!("{}:{}:{kind}:{url}:", self.depth, self.pid));
        let paths = std::iter::once(&self.chosen).chain(&self.fronts);
        if let Ok(list) = std::env::join_paths(paths) {
            value.push(list);
        }
        value
    }

    /// The marker in `value`, when it is one.
    pub(crate) fn parse(value: &OsStr) -> Option<Marker> {
        let text = value.to_str()?;
        let mut parts = text.splitn(5, ':');
        let depth = parts.next()?.parse().ok()?;
        let pid = parts.next()?.parse().ok()?;
        let probe = match parts.next()? {
            "run" => false,
            "probe" => true,
            _ => return None,
        };
        let catwalk_url = match parts.next()? {
            "-" => None,
            url => Some(from_bytes(crate::store::digest::unhex(
                url.strip_prefix('=')?,
            )?)),
        };
        let mut paths = std::env::split_paths(parts.next().unwrap_or_default());
        let chosen = paths.next().unwrap_or_default();
        let fronts = paths.filter(|p| !p.as_os_str().is_empty()).collect();
        Some(Marker {
            depth,
            pid,
            probe,
            chosen,
            fronts,
            catwalk_url,
        })
    }
}

fn os_bytes(value: &OsStr) -> Vec<u8> {
    #[cfg(unix)]
    return std::os::unix::ffi::OsStrExt::as_bytes(value).to_vec();
    #[cfg(not(unix))]
    return value.to_string_lossy().into_owned().into_bytes();
}

fn from_bytes(bytes: Vec<u8>) -> OsString {
    #[cfg(unix)]
    return std::os::unix::ffi::OsStringExt::from_vec(bytes);
    #[cfg(not(unix))]
    return String::from_utf8_lossy(&bytes).into_owned().into();
}

/// What a start that may have been handed over by a front does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Chain {
    /// Look for Crush, skipping these (this program and the fronts
    /// before it), at this depth.
    Search {
        /// Never Crush.
        fronts: Vec<PathBuf>,
        /// Hand-overs so far.
        depth: u32,
    },
    /// A front asked this program for Crush's version: there is none to
    /// give.
    Probe,
    /// A loop: the program chosen as Crush started a front again, in the
    /// same process.
    Wrapper(PathBuf),
    /// A loop: too many hand-overs nested.
    Deep(u32),
}

/// Whether this start (`me`, canonical; process `pid`) may look for Crush,
/// given the marker it found.
pub(crate) fn chain(marker: Option<&Marker>, me: &Path, pid: u32) -> Chain {
    let Some(marker) = marker else {
        return Chain::Search {
            fronts: vec![me.to_path_buf()],
            depth: 0,
        };
    };
    if marker.probe {
        return Chain::Probe;
    }
    // The same process: nothing but `exec` ran between that front and this
    // one. Either the program it chose is this one (a copy of it, found
    // further on PATH), or it is a wrapper that found this program again.
    if marker.pid == pid && marker.chosen != me && !marker.chosen.as_os_str().is_empty() {
        return Chain::Wrapper(marker.chosen.clone());
    }
    if marker.depth >= MAX_DEPTH {
        return Chain::Deep(marker.depth);
    }
    let mut fronts = marker.fronts.clone();
    if !fronts.iter().any(|f| f == me) {
        fronts.push(me.to_path_buf());
    }
    Chain::Search {
        fronts,
        depth: marker.depth,
    }
}

/// Finds the real Crush: named by [`REAL_CRUSH_ENV`], else by the global
/// JSON config, else on `PATH`; never one of `fronts`.
pub(crate) fn find(env: EnvLookup, fronts: &[PathBuf]) -> Result<Crush, Missing> {
    let named = env(REAL_CRUSH_ENV)
        .map(|p| (PathBuf::from(p), Origin::Env))
        .or_else(|| config::front::real_crush(env).map(|(p, file)| (p, Origin::Config(file))));
    if let Some((path, origin)) = named {
        // A relative one would be checked here but started from wherever
        // the system looks it up (a bare name: on PATH, where this is).
        if !path.is_absolute() {
            return Err(Missing::Named(origin, path, "is not a full path".into()));
        }
        return match program(&path) {
            Err(why) => Err(Missing::Named(origin, path, why)),
            Ok(canonical) if fronts.contains(&canonical) => Err(Missing::NamedFront(origin, path)),
            Ok(canonical) => Ok(Crush {
                path,
                canonical,
                origin,
            }),
        };
    }
    let path_var = env("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path_var) {
        // An empty entry is the working directory, as for a shell.
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        for name in names(env) {
            let path = dir.join(&name);
            if let Ok(canonical) = program(&path)
                && !fronts.contains(&canonical)
            {
                return Ok(Crush {
                    path,
                    canonical,
                    origin: Origin::Path,
                });
            }
        }
    }
    Err(Missing::NotOnPath)
}

/// The file names `crush` may have in a folder of `PATH`.
fn names(env: EnvLookup) -> Vec<OsString> {
    if cfg!(windows) {
        let exts = env("PATHEXT").unwrap_or_else(|| ".COM;.EXE;.BAT;.CMD".into());
        exts.to_string_lossy()
            .split(';')
            .filter(|e| !e.is_empty())
            .map(|e| OsString::from(format!("crush{e}")))
            .collect()
    } else {
        vec![OsString::from("crush")]
    }
}

/// The canonical path of `path` when it is a program that can run;
/// otherwise what is wrong, in words that follow "which".
pub(crate) fn program(path: &Path) -> Result<PathBuf, String> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "does not exist".to_string(),
        _ => format!("cannot be read: {e}"),
    })?;
    if !meta.is_file() {
        return Err("is not a file".into());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o111 == 0 {
            return Err("is not executable".into());
        }
    }
    path.canonicalize()
        .map_err(|e| format!("cannot be resolved: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn marker(depth: u32, pid: u32, chosen: &str, fronts: &[&str]) -> Marker {
        Marker {
            depth,
            pid,
            probe: false,
            chosen: chosen.into(),
            fronts: fronts.iter().map(PathBuf::from).collect(),
            catwalk_url: None,
        }
    }

    #[test]
    fn the_marker_reads_back_what_it_wrote() {
        let m = marker(2, 42, "/b/crush", &["/a/crush", "/c d/crush"]);
        assert_eq!(Marker::parse(&m.encode()), Some(m.clone()));
        let probe = Marker { probe: true, ..m };
        assert_eq!(Marker::parse(&probe.encode()), Some(probe.clone()));
        for url in ["", "https://u:p@mirror.example:8443/a;b", "file:c:/x"] {
            let with = Marker {
                catwalk_url: Some(url.into()),
                ..probe.clone()
            };
            assert_eq!(Marker::parse(&with.encode()), Some(with), "{url}");
        }
        for bad in [
            "",
            "x",
            "1:2",
            "1:2:walk:-:/a",
            "-1:2:run:-:/a",
            "1:2:run:=4:/a",
            "1:2:run:/a",
        ] {
            assert_eq!(Marker::parse(OsStr::new(bad)), None, "{bad:?}");
        }
    }

    #[test]
    fn a_chain_is_a_loop_only_when_it_comes_back_or_runs_too_deep() {
        let me = Path::new("/a/crush");
        assert_eq!(
            chain(None, me, 7),
            Chain::Search {
                fronts: vec![me.into()],
                depth: 0
            }
        );
        // Exec'd into by a front that chose a wrapper: a loop.
        let wrapper = marker(1, 7, "/w/crush", &["/a/crush"]);
        assert_eq!(
            chain(Some(&wrapper), me, 7),
            Chain::Wrapper("/w/crush".into())
        );
        // Exec'd into as the chosen Crush: a copy of the front, which skips
        // itself and the front before it.
        let copy = marker(1, 7, "/b/crush", &["/a/crush"]);
        assert_eq!(
            chain(Some(&copy), Path::new("/b/crush"), 7),
            Chain::Search {
                fronts: vec!["/a/crush".into(), "/b/crush".into()],
                depth: 1
            }
        );
        // Another process: Crush running a tool that runs `crush`.
        assert_eq!(
            chain(Some(&wrapper), me, 8),
            Chain::Search {
                fronts: vec!["/a/crush".into()],
                depth: 1
            }
        );
        let deep = marker(MAX_DEPTH, 7, "/w/crush", &["/a/crush"]);
        assert_eq!(chain(Some(&deep), me, 9), Chain::Deep(MAX_DEPTH));
        let probe = Marker {
            probe: true,
            ..copy
        };
        assert_eq!(chain(Some(&probe), me, 7), Chain::Probe);
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
                    Origin::Env,
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
        let front = a.join("crush").canonicalize().unwrap();
        let path = std::env::join_paths([&a, &b, &c, &dir("empty"), &a, &d]).unwrap();
        let vars: HashMap<&str, OsString> = [("PATH", path)].into();
        let env = |k: &str| vars.get(k).cloned();
        let found = find(&env, std::slice::from_ref(&front)).unwrap();
        assert_eq!(found.path, d.join("crush"));
        assert_eq!(found.origin, Origin::Path);
        let d_crush = found.canonical.clone();
        assert_eq!(
            find(&env, &[front.clone(), d_crush]),
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
            Err(Missing::NamedFront(Origin::Env, b.join("crush")))
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
}
