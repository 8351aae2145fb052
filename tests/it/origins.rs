//! For every pair of configuration sources that disagree about
//! `provider-auto-update`, `providers --status` names the winner of each
//! order of the files (the higher in the spec's order, the higher in
//! Crush v0.90's) and where its value came from, whichever way round the
//! values are; the setting is on only when both orders say on.

use std::fs;
use std::path::PathBuf;

use crate::common::*;

/// One source of the setting, lowest priority first in [`sources`].
#[derive(Debug, Clone)]
enum Where {
    /// A JSON config at this path.
    Json(PathBuf),
    /// A crushrc at this path.
    Rc(PathBuf),
    /// The `.env` file of the folder the process starts in.
    DotEnv(PathBuf),
    /// The process's environment.
    Env,
}

/// The sources, in the spec's order (section 5), for a HOME whose git
/// work tree `repo` holds the working directory `repo/sub`: the system
/// file, the global state, the workspace file, the global JSON and
/// crushrc, the project files of the root then of the nearer folder
/// (`crush.json`, `crushrc`, `.crush.json`, `.crushrc` in each), `.env`,
/// the environment.
fn sources(home: &std::path::Path) -> Vec<Where> {
    let repo = home.join("repo");
    let sub = repo.join("sub");
    let mut all = vec![
        Where::Json(home.join("etc/crush/crush.json")),
        Where::Json(home.join(".local/share/crush/crush.json")),
        Where::Json(sub.join(".crush/crush.json")),
        Where::Json(home.join(".config/crush/crush.json")),
        Where::Rc(home.join(".config/crush/crushrc")),
    ];
    for dir in [&repo, &sub] {
        all.push(Where::Json(dir.join("crush.json")));
        all.push(Where::Rc(dir.join("crushrc")));
        all.push(Where::Json(dir.join(".crush.json")));
        all.push(Where::Rc(dir.join(".crushrc")));
    }
    all.push(Where::DotEnv(sub.join(".env")));
    all.push(Where::Env);
    all
}

/// The sources of [`sources`] in Crush v0.90's order, lowest first: the
/// system file, the global JSON and crushrc, the global state, the
/// project files of the root then of the nearer folder (`crush.json`,
/// `.crush.json`, `crushrc`, `.crushrc` in each), the workspace file,
/// `.env`, the environment.
fn crush_order(home: &std::path::Path) -> Vec<PathBuf> {
    let repo = home.join("repo");
    let sub = repo.join("sub");
    let mut all = vec![
        home.join("etc/crush/crush.json"),
        home.join(".config/crush/crush.json"),
        home.join(".config/crush/crushrc"),
        home.join(".local/share/crush/crush.json"),
    ];
    for dir in [&repo, &sub] {
        for name in ["crush.json", ".crush.json", "crushrc", ".crushrc"] {
            all.push(dir.join(name));
        }
    }
    all.push(sub.join(".crush/crush.json"));
    all
}

/// Whether `high` is over `low` in Crush v0.90's order (`.env` and the
/// environment are over every file in both).
fn over_in_crushs_order(order: &[PathBuf], low: &Where, high: &Where) -> bool {
    let rank = |place: &Where| match place {
        Where::Json(path) | Where::Rc(path) => order.iter().position(|p| p == path).unwrap(),
        Where::DotEnv(_) => order.len(),
        Where::Env => order.len() + 1,
    };
    rank(high) > rank(low)
}

/// Writes `on` at `place`; returns the variable to set for [`Where::Env`]
/// and the origin `--status` must show.
fn write(place: &Where, on: bool) -> (Option<&'static str>, String) {
    let disable = if on { "0" } else { "1" };
    let put = |path: &PathBuf, text: String| {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    };
    match place {
        Where::Json(path) => {
            put(
                path,
                format!(
                    r#"{{"options": {{"disable_provider_auto_update": {}}}}}"#,
                    !on
                ),
            );
            (
                None,
                format!("options.disable_provider_auto_update in {}", path.display()),
            )
        }
        Where::Rc(path) => {
            put(
                path,
                format!("# a setting\noption provider-auto-update {on}\n"),
            );
            (None, format!("option at {}:2", path.display()))
        }
        Where::DotEnv(path) => {
            put(
                path,
                format!("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE={disable}\n"),
            );
            (
                None,
                format!(
                    "CRUSH_DISABLE_PROVIDER_AUTO_UPDATE={disable} at {}:1",
                    path.display()
                ),
            )
        }
        Where::Env => (
            Some(disable),
            format!("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE={disable}"),
        ),
    }
}

fn remove(place: &Where) {
    match place {
        Where::Json(path) | Where::Rc(path) | Where::DotEnv(path) => {
            let _ = fs::remove_file(path);
        }
        Where::Env => {}
    }
}

#[test]
fn status_names_the_winner_of_every_disagreeing_pair() {
    let home = Home::new();
    let root = home.path().canonicalize().unwrap();
    git_init(&root.join("repo"));
    let cwd = root.join("repo/sub");
    fs::create_dir_all(&cwd).unwrap();
    let all = sources(&root);
    let crushs = crush_order(&root);
    let mut checked = 0;
    for (low_index, low) in all.iter().enumerate() {
        for high in &all[low_index + 1..] {
            for high_on in [false, true] {
                let (low_var, low_origin) = write(low, !high_on);
                let (high_var, origin) = write(high, high_on);
                let mut cmd = crush_in(home.path(), &["providers", "--status", "--json"]);
                cmd.current_dir(&cwd);
                if let Some(value) = high_var.or(low_var) {
                    cmd.env("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE", value);
                }
                let run = Run::from(cmd.output().unwrap());
                run.ok();
                let setting = &run.json()["provider_auto_update"];
                let read = |order: &str| {
                    let by = match setting.get("orders") {
                        Some(orders) => &orders[order],
                        None => setting,
                    };
                    (
                        by["value"].as_bool().unwrap(),
                        by["origin"].as_str().unwrap().to_owned(),
                    )
                };
                assert_eq!(
                    read("spec"),
                    (high_on, origin.clone()),
                    "the spec's order: {high:?} over {low:?}: {run:?}"
                );
                let crush = match over_in_crushs_order(&crushs, low, high) {
                    true => (high_on, origin.clone()),
                    false => (!high_on, low_origin.clone()),
                };
                assert_eq!(
                    read("crush_v0_90"),
                    crush,
                    "Crush v0.90's order: {high:?} against {low:?}: {run:?}"
                );
                assert_eq!(
                    setting["value"].as_bool(),
                    Some(high_on && crush.0),
                    "{run:?}"
                );
                remove(low);
                remove(high);
                checked += 1;
            }
        }
    }
    assert_eq!(checked, all.len() * (all.len() - 1));
}
