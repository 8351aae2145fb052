//! Hyper's provider at start-up. When a Hyper key is configured, the start
//! keeps `hyper.json` fresh beside the catalog: decided as the catalog is
//! ([`super::decide`]) on its own cache and state, on the same interval,
//! refreshed by the same refresh under the same lock (one helper process
//! refreshes both), and its held and failed refreshes told as the
//! catalog's are. Start-up hands over no Hyper provider: Crush reads
//! `hyper.json` itself.

use reqwest::Url;

use super::refresh::{self, IfBusy, Job, Outcome};
use super::{Decision, InUse, StartupCatalog, StartupOptions, Warning, crushrc, decide};
use crate::catalog::Target;
use crate::fetch::http::Bearer;
use crate::fetch::watch::Signal;
use crate::store::cache::{self, Bytes, CacheFiles};
use crate::store::state;

/// Hyper's provider to keep fresh: where from, and the key its requests
/// carry.
#[derive(Debug, Clone)]
pub struct HyperOptions {
    /// `$HYPER_URL/api/v1/provider`, else Hyper's server's.
    pub url: Url,
    /// The Hyper key (`HYPER_API_KEY`, else the config's).
    pub key: Bearer,
}

/// What this start does about Hyper's provider.
#[derive(Debug)]
pub(super) struct Plan {
    /// `hyper.json` and its state.
    pub files: CacheFiles,
    /// What its cache calls for.
    pub decision: Decision,
    /// Its refresh.
    pub request: refresh::Request,
}

impl Plan {
    /// Whether a request is due (waited for or not).
    pub(super) fn is_due(&self) -> bool {
        !matches!(self.decision, Decision::Offline | Decision::Cache)
    }

    /// Its refresh, as a job of the refresh.
    pub(super) fn job(&self) -> Job<'_> {
        Job {
            files: &self.files,
            request: &self.request,
            known: None,
        }
    }
}

/// What this start does about Hyper's provider beside the catalog of
/// `files`, telling what its last refresh held back or how it failed (in
/// `warnings`); `None` without a Hyper key or without network.
pub(super) fn plan(
    files: &CacheFiles,
    options: &StartupOptions,
    warnings: &mut Vec<Warning>,
) -> Option<Plan> {
    let hyper = options.hyper.as_ref()?;
    let files = files.with_target(Target::Hyper);
    let found = cache::read(&files, Bytes::Read);
    let cached = found.valid(&files).unwrap_or_else(|e| {
        let problem = e.to_string();
        warnings.push(Warning::InvalidHyperCache { problem });
        None
    });
    let decision = decide(
        options.auto_update,
        cached.as_ref(),
        options.interval,
        state::now(),
        options.wait,
    );
    if decision == Decision::Offline {
        return None;
    }
    super::report_refresh(&files, cached.as_ref(), warnings);
    Some(Plan {
        files,
        decision,
        request: refresh::Request {
            url: hyper.url.clone(),
            timeout: options.timeout,
            interval: options.interval,
            keys: options.keys.clone(),
            watch: options.refresh_watch(),
            bearer: Some(hyper.key.clone()),
        },
    })
}

/// What a refresh of Hyper's provider that a person waited for came to,
/// for them to read now; `Err` with the signal of an interrupted one.
fn told(plan: &Plan, outcome: Outcome) -> Result<Option<Warning>, Signal> {
    let url = crate::fetch::source::redacted(plan.request.url.as_str());
    Ok(match outcome {
        Outcome::Unchanged | Outcome::Updated(_) => None,
        Outcome::Interrupted(code) => return Err(code),
        Outcome::Unsaved(_, why) => Some(Warning::HyperUnsaved { url, cause: why }),
        Outcome::Failed(why) => {
            let cached = cache::read(&plan.files, Bytes::Read).valid(&plan.files);
            let cached = cached.ok().flatten();
            Some(Warning::HyperRefreshFailed {
                url,
                cause: why,
                using: InUse::hyper(cached.as_ref()),
                crushrc: crushrc(),
            })
        }
        Outcome::Held(findings) => Some(Warning::Held {
            target: Target::Hyper,
            url,
            at: None,
            findings,
            needs: super::held_needs(&plan.files),
            foreign: false,
        }),
    })
}

/// The catalog's refresh `catalog`, and Hyper's after it when `plan`
/// has one due.
pub(super) fn with<'a>(catalog: Job<'a>, plan: Option<&'a Plan>) -> Vec<Job<'a>> {
    std::iter::once(catalog)
        .chain(plan.map(Plan::job))
        .collect()
}

/// Runs the catalog's refresh a person waits for, and Hyper's after it
/// when due, under one lock: the catalog's outcome, Hyper's told in
/// `warnings` (an interrupted one ends the start as the catalog's would).
pub(super) fn waited(
    catalog: Job<'_>,
    plan: Option<&Plan>,
    warnings: &mut Vec<Warning>,
) -> Outcome {
    let mut outcomes = refresh::run_all(&with(catalog, plan), IfBusy::Wait).into_iter();
    let outcome = outcomes.next().unwrap_or(Outcome::Unchanged);
    match (plan, outcomes.next()) {
        (Some(plan), Some(hyper)) => match told(plan, hyper) {
            Ok(told) => {
                warnings.extend(told);
                outcome
            }
            Err(code) => Outcome::Interrupted(code),
        },
        _ => outcome,
    }
}

/// `loaded`, handed over by a start that refreshes no catalog, once
/// Hyper's refresh is run as `plan` says: waited for (its outcome told),
/// or started in the background.
pub(super) fn alone(
    plan: Option<&Plan>,
    background: &super::Background,
    mut loaded: StartupCatalog,
) -> StartupCatalog {
    let Some(plan) = plan else {
        return loaded;
    };
    if plan.decision == Decision::Wait {
        let outcome = refresh::run(&plan.files, &plan.request, None, IfBusy::Wait);
        match told(plan, outcome) {
            Ok(told) => loaded.warnings.extend(told),
            Err(code) => loaded.interrupted = Some(code),
        }
    } else {
        loaded.hyper_refreshing = start(plan, background, &mut loaded.warnings);
    }
    loaded
}

/// Starts the refresh of Hyper's provider in the background: on a thread
/// of its own (nobody holds a handle to it: the outcome is in its state),
/// or in a helper process.
pub(super) fn start(
    plan: &Plan,
    background: &super::Background,
    warnings: &mut Vec<Warning>,
) -> bool {
    let started = match background {
        super::Background::Thread => {
            let (files, request) = (plan.files.clone(), plan.request.clone());
            std::thread::Builder::new()
                .name("hyper-refresh".into())
                .spawn(move || refresh::run(&files, &request, None, IfBusy::Wait))
                .map(drop)
        }
        super::Background::Process(exe) => refresh::spawn_helper(exe, &[plan.job()]),
    };
    match started {
        Ok(()) => true,
        Err(e) => {
            warnings.push(Warning::NoHyperBackground {
                cause: e.to_string(),
            });
            false
        }
    }
}
