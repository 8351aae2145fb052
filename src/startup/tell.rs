//! What a start tells a person, in words: the hints that end a warning
//! (what to run, as it is typed), a held or failed refresh told at every
//! start (or once), and a `CATWALK_URL` no refresh can use.

use std::time::Duration;

use crate::catalog::{Target, embedded};
use crate::error::program;
use crate::fetch::source;
use crate::store::cache::{self, CacheFiles, Cached};
use crate::store::state::{self, Need, RefreshOutcome};
use crate::trust::policy::flag;

/// [`refresh_hint`] for `target`'s document.
pub(crate) fn refresh_hint_for(target: Target) -> String {
    let me = program();
    let update = update_command(target);
    // The global crushrc, which every project reads.
    let crushrc = crate::store::paths::config_dir(&crate::store::paths::process_env)
        .map(|dir| dir.join("crushrc").display().to_string())
        .unwrap_or_else(|_| "a crushrc".into());
    format!(
        "on a machine without network, set `option provider-auto-update false` in {crushrc} or CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=1; once online, `{me} {update}` fetches it by hand"
    )
}

/// `update-providers`, and `--source hyper` for Hyper's provider.
fn update_command(target: Target) -> &'static str {
    match target {
        Target::Catalog => "update-providers",
        Target::Hyper => "update-providers --source hyper",
    }
}

/// [`held_hint`] for `target`'s document.
pub(crate) fn held_hint_for(target: Target, url: &str, needs: &[Need]) -> String {
    let me = program();
    let update = update_command(target);
    let from = format!("{me} {update} {}", shell_word(url));
    let kept = match target {
        Target::Catalog => "keep the catalog in use:",
        Target::Hyper => "keep the one in use:",
    };
    let keep = (kept, format!("{me} {update} --keep-current"));
    // Held for its signature: neither a review nor an apply without one
    // gets past the pinned key.
    let (commands, after) = if needs.contains(&Need::Signature) {
        let apply = format!("{from} {} FILE", flag(Need::Signature));
        let after = format!("\n  (FILE its signature; or the mirror must serve {url}.minisig)");
        (vec![keep, ("apply it signed:", apply)], after)
    } else {
        let apply = std::iter::once(from.clone())
            .chain(needs.iter().map(|need| flag(*need).to_owned()))
            .collect::<Vec<_>>()
            .join(" ");
        let commands = vec![
            keep,
            ("review it:", format!("{from} --dry-run")),
            ("apply it:", apply),
        ];
        (commands, String::new())
    };
    let width = commands
        .iter()
        .map(|(label, _)| label.len())
        .max()
        .unwrap_or(0);
    let lines: Vec<String> = commands
        .iter()
        .map(|(label, command)| format!("  {label:width$}  {command}"))
        .collect();
    lines.join("\n") + &after
}

/// `text` as one word a shell reads back as it is: bare when it holds only
/// characters no shell gives a meaning (a URL's usual ones), else in single
/// quotes.
fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/:._~%+=@,-".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// The warning for a held refresh of `target`'s document from `url`, held
/// at `at` (when known).
pub(super) fn held_warning(
    target: Target,
    url: &impl std::fmt::Display,
    at: Option<u64>,
    findings: &[String],
    needs: &[Need],
) -> String {
    let more = match findings.len() {
        0 | 1 => String::new(),
        n => format!(
            " (and {} more: `{} providers --status` lists them)",
            n - 1,
            program()
        ),
    };
    let when = at.map_or_else(String::new, |at| format!(" at {}", state::rfc3339(at)));
    let kept = match target {
        Target::Catalog => "the catalog in use is kept",
        // With a Hyper key, Crush fetches for itself; while this is held
        // the front starts it with its updates off instead.
        Target::Hyper => {
            "hyper.json is not replaced (while it is held, Crush is started with its own updates off and uses its embedded Hyper provider)"
        }
    };
    format!(
        "a refresh of {} from {url} was held{when}, and {kept}: {}{more}\n{}",
        target.noun(),
        findings.first().map_or("", String::as_str),
        held_hint_for(target, &url.to_string(), needs)
    )
}

/// Tells of what the last background refresh of `files`' document held
/// back (at every start, while it is held), or, once, of its failure
/// (marking it told in the state file). `cached` is the cache; `None` for
/// a document not there, whose state is then its own
/// ([`cache::absent_state`]: Hyper's provider).
pub(super) fn report_refresh(
    files: &CacheFiles,
    cached: Option<&Cached>,
    warnings: &mut Vec<String>,
) {
    let state = match cached {
        Some(cached) => cached.state.clone(),
        None => cache::absent_state(files),
    };
    let Some(state) = &state else {
        return;
    };
    let target = files.target;
    if let Some((refresh, held)) = state.held() {
        warnings.push(held_warning(
            target,
            &refresh.url,
            Some(refresh.at),
            &held.changes,
            &held.needs,
        ));
    }
    let Some(failure) = state.untold_failure() else {
        return;
    };
    let using = match target {
        Target::Hyper => super::hyper::in_use(cached).to_string(),
        _ if state.source == source::Source::Embedded.to_string() => {
            format!("using the embedded catalog ({})", embedded::origin())
        }
        _ => "using the cached catalog".to_string(),
    };
    warnings.push(format!(
        "the last refresh of {} from {} failed at {}: {}; {using}; {}",
        target.noun(),
        failure.url,
        state::rfc3339(failure.at),
        failure.cause.as_deref().unwrap_or("no cause recorded"),
        refresh_hint_for(target)
    ));
    mark_told(files, cached, failure.cause.clone());
}

/// Marks the last refresh's failure of `files`' document, `cached` (see
/// [`report_refresh`]), as told, when its cause is still `cause`.
pub(super) fn mark_told(files: &CacheFiles, cached: Option<&Cached>, cause: Option<String>) {
    // Best effort: should it not be saved, the warning shows once more. By
    // cause, not time: a refresh that failed the same way meanwhile is the
    // same failure.
    let told = |state: &mut state::CacheState| {
        if let Some(refresh) = &mut state.refresh
            && refresh.outcome == RefreshOutcome::Failed
            && refresh.cause == cause
        {
            refresh.told = true;
        }
    };
    let wait = Duration::from_millis(200);
    let _ = match cached {
        Some(cached) => cache::update_state(files, cached, wait, told),
        None => cache::update_absent_state(files, wait, told),
    };
}

/// What every start says of a `CATWALK_URL` that is not an http(s) URL:
/// no refresh goes anywhere (Crush's request with it fails before it is
/// sent; never the public server instead), and what it is good for.
pub(crate) fn not_http_warning(value: &str) -> String {
    let me = program();
    if let Some((what, url)) = source::stray_space(value) {
        return format!(
            "CATWALK_URL={} {what}, which is no part of a URL: no refresh at start-up (Crush makes no request with it either); remove it: CATWALK_URL={}",
            crate::catalog::quoted(&source::redacted(value)),
            crate::catalog::quoted(&source::redacted(url))
        );
    }
    let value = source::redacted(value);
    let value = value.as_str();
    let meant = source::meant_url(value).map_or_else(String::new, |url| {
        format!("; for a mirror, write its scheme: CATWALK_URL={url}")
    });
    format!(
        "CATWALK_URL={} is not an http:// or https:// URL: no refresh at start-up (Crush makes no request with it either); `{me} update-providers` reads it as its SOURCE (a file, or `embedded`){meant}",
        crate::catalog::quoted(value)
    )
}

/// What a person must allow to apply what the last refresh of `files`'
/// document held back, as its state records it (nothing when it records
/// no hold).
pub(super) fn held_needs(files: &CacheFiles) -> Vec<Need> {
    let state = match cache::read_valid(files) {
        Ok(Some(cached)) => cached.state,
        _ => cache::absent_state(files),
    };
    match state.and_then(|s| s.refresh).and_then(|r| r.held) {
        Some(held) => held.needs,
        None => Vec::new(),
    }
}
