//! Hyper's API key as Crush finds it: `HYPER_API_KEY`, else the merged
//! configuration's `providers.hyper.api_key` in Crush v0.90's order
//! ([`super::Settings`]: JSON files, `provider add hyper --api-key` in a
//! crushrc; `crush login hyper` writes the global state's).

/// The environment variable Crush takes Hyper's key from first.
pub(crate) const HYPER_KEY_ENV: &str = "HYPER_API_KEY";

/// A Hyper key that is set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HyperKey {
    /// `HYPER_API_KEY`, or the file (and crushrc line) that sets it.
    pub origin: String,
    /// The key as Crush sends it (a config's value as written, as Crush's
    /// `resolveHyperAPIKey` takes it); `None` when only a shell could
    /// tell it (a crushrc command this reader does not run, which counts
    /// as setting one: the answer only decides whether Crush keeps
    /// fetching for itself, the safe side).
    pub value: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::paths::EnvLookup;
    use std::collections::HashMap;
    use std::ffi::OsString;
    use std::fs;
    use std::path::Path;

    /// The key's origin for the settings of `cwd`.
    fn hyper_key(cwd: &Path, env: EnvLookup) -> Option<String> {
        find_hyper_key(cwd, env).map(|key| key.origin)
    }

    fn find_hyper_key(cwd: &Path, env: EnvLookup) -> Option<HyperKey> {
        super::super::tests::resolve(cwd, env).unwrap().hyper_key
    }

    /// What a crushrc alone says of the key: its line, and its value
    /// unless only a shell knows it.
    fn crushrc_hyper_key(rc: &str) -> Option<(Option<usize>, Option<String>)> {
        let (node, _) = super::super::crushrc::read(Path::new("rc"), rc, 0).unwrap();
        let found = super::super::merge::decode(&node).unwrap().hyper_api_key?;
        Some((
            found.src.line,
            (!found.src.unevaluated).then_some(found.value),
        ))
    }

    fn env_of(pairs: &[(&str, &Path)]) -> impl Fn(&str) -> Option<OsString> + use<> {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_os_str().to_owned()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn a_hyper_key_comes_from_the_environment_json_or_a_crushrc() {
        let root = tempfile::tempdir().unwrap();
        let cwd = root.path().join("proj");
        fs::create_dir_all(cwd.join(".git")).unwrap();
        let config = root.path().join("config");
        let data = root.path().join("data");
        fs::create_dir_all(&config).unwrap();
        fs::create_dir_all(&data).unwrap();
        let env = env_of(&[
            ("CRUSH_GLOBAL_CONFIG", &config),
            ("CRUSH_GLOBAL_DATA", &data),
        ]);
        assert_eq!(hyper_key(&cwd, &env), None);
        // What `crush login hyper` writes, in the global state.
        let state = data.join("crush.json");
        fs::write(&state, r#"{"Providers":{"hyper":{"API_KEY":"tok"}}}"#).unwrap();
        assert_eq!(hyper_key(&cwd, &env), Some(state.display().to_string()));
        // A higher file emptying it: none.
        fs::write(
            cwd.join("crush.json"),
            r#"{"providers":{"hyper":{"api_key":""}}}"#,
        )
        .unwrap();
        assert_eq!(hyper_key(&cwd, &env), None);
        let rc = cwd.join(".crushrc");
        fs::write(&rc, "provider add hyper --api-key sk-1\n").unwrap();
        assert_eq!(hyper_key(&cwd, &env), Some(format!("{}:1", rc.display())));
        fs::write(
            &rc,
            "provider add hyper --api-key sk-1\nprovider rm hyper\n",
        )
        .unwrap();
        assert_eq!(hyper_key(&cwd, &env), None);
        // An expansion only the shell knows: assumed set.
        fs::write(&rc, "provider add hyper --api-key \"$K\"\n").unwrap();
        assert_eq!(hyper_key(&cwd, &env), Some(format!("{}:1", rc.display())));
        fs::write(&rc, "provider add other --api-key k\n").unwrap();
        assert_eq!(hyper_key(&cwd, &env), None);
        let env = env_of(&[
            ("CRUSH_GLOBAL_CONFIG", &config),
            ("HYPER_API_KEY", Path::new("k")),
        ]);
        assert_eq!(hyper_key(&cwd, &env), Some("HYPER_API_KEY".into()));
    }

    /// The key's value, as Crush sends it: the environment's, else the
    /// last file's as written; unknown where only a shell could tell.
    #[test]
    fn the_hyper_keys_value_is_found_where_it_is_set() {
        let root = tempfile::tempdir().unwrap();
        let cwd = root.path().join("proj");
        fs::create_dir_all(cwd.join(".git")).unwrap();
        let config = root.path().join("config");
        fs::create_dir_all(&config).unwrap();
        let env = env_of(&[("CRUSH_GLOBAL_CONFIG", &config)]);
        let value =
            |env: &dyn Fn(&str) -> Option<OsString>| find_hyper_key(&cwd, env).map(|k| k.value);
        fs::write(
            config.join("crush.json"),
            r#"{"providers":{"hyper":{"api_key":"from-json"}}}"#,
        )
        .unwrap();
        assert_eq!(value(&env), Some(Some("from-json".into())));
        let rc = cwd.join(".crushrc");
        fs::write(&rc, "provider add hyper --api-key from-rc\n").unwrap();
        assert_eq!(value(&env), Some(Some("from-rc".into())));
        fs::write(&rc, "provider add hyper --api-key \"$K\"\n").unwrap();
        assert_eq!(value(&env), Some(None));
        let with_env = env_of(&[
            ("CRUSH_GLOBAL_CONFIG", &config),
            ("HYPER_API_KEY", Path::new("from-env")),
        ]);
        assert_eq!(value(&with_env), Some(Some("from-env".into())));
        // Empty, as Crush reads it: none, and the files decide.
        let empty = env_of(&[
            ("CRUSH_GLOBAL_CONFIG", &config),
            ("HYPER_API_KEY", Path::new("")),
        ]);
        assert_eq!(value(&empty), Some(None));
    }

    /// A key set by a command that runs otherwise than plainly (after an
    /// assignment or `command`, or inside a statement this reader skips)
    /// is set for Crush, which runs the file.
    #[test]
    fn the_last_api_key_wins_as_crush_applies_the_flags() {
        let key = |rc: &str| match crushrc_hyper_key(rc) {
            Some((_, value)) => value,
            other => panic!("{rc}: {other:?}"),
        };
        assert_eq!(
            key("provider add hyper --api-key first --api-key last\n").as_deref(),
            Some("last")
        );
        assert_eq!(
            key("provider add hyper --name --api-key --api-key k\n").as_deref(),
            Some("k")
        );
        assert_eq!(
            key("provider add hyper --extra-header --api-key x --api-key k\n").as_deref(),
            Some("k")
        );
        for fails in [
            "provider add hyper --name --api-key\n",
            "provider add hyper --bogus 1 --api-key k\n",
            "provider add hyper --api-key\n",
        ] {
            assert_eq!(crushrc_hyper_key(fails), None, "{fails}");
        }
    }

    #[test]
    fn a_hyper_key_set_by_a_command_run_otherwise_is_set() {
        for rc in [
            "command provider add hyper --api-key k\n",
            "K=1 provider add hyper --api-key k\n",
            "true && provider add hyper --api-key k\n",
        ] {
            assert_eq!(crushrc_hyper_key(rc), Some((Some(1), None)), "{rc}");
        }
        for rc in [
            "command provider add other --api-key k\n",
            "'K=1' provider add hyper --api-key k\n",
            "echo provider add hyper\n",
        ] {
            assert_eq!(crushrc_hyper_key(rc), None, "{rc}");
        }
    }
}
