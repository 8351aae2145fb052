//! An update's inputs parsed ([`Parsed`]), and the plan applied: the new
//! document staged beside its target (under the cache's lock), reviewed
//! against what is remembered as it is then, and committed, or the cache
//! only confirmed.

use std::path::{Path, PathBuf};

use super::plan::{self, Action, Allowed};
use super::read::Inputs;
use super::{LOCK_WAIT, Output, Replaced, UpdateOptions, UpdateReport, Warning};
use crate::catalog::{Catalog, Target, changes};
use crate::error::{Cause, Failure};
use crate::store::atomic;
use crate::store::cache::{self, CacheFiles, Cached};
use crate::store::digest::{self, hex};
use crate::store::state::{self, CacheState};
use crate::trust::guard::Review;
use crate::trust::memory::{self, Memory};
use crate::trust::policy::{self, Applied, Destination, Replacing};
use crate::trust::signature::SIGNATURE_SUFFIX;
use crate::trust::{self, signature};

/// An update's inputs, checked and parsed: the new document, valid, and
/// the valid one it replaces, borrowing the bytes [`Inputs`] holds.
#[derive(Debug)]
pub struct Parsed<'i> {
    inputs: &'i Inputs,
    /// Lowercase hex SHA-256 of the new bytes.
    sha256: String,
    next: Catalog,
    /// What it replaces, when that is valid (`None` too when it is the
    /// same bytes: then `next` stands for it).
    previous: Option<Catalog>,
    /// The new document's warnings.
    warnings: Vec<crate::catalog::Warning>,
}

impl Inputs {
    /// Checks the bytes against `options.sha256`, and reads the new
    /// document (of `target`) and the one it replaces.
    pub fn parse(&self, target: Target, options: &UpdateOptions) -> Result<Parsed<'_>, Failure> {
        let sha256 = hex(&digest::sha256(self.bytes()));
        plan::check_digest(options.sha256.as_deref(), &sha256).map_err(|c| self.fail(c))?;
        let mut next = target
            .validate(self.bytes())
            .map_err(|e| self.fail(Cause::invalid(target, e)))?;
        let warnings = std::mem::take(&mut next.warnings);
        let previous = self
            .previous_bytes()
            .and_then(|bytes| target.validate(bytes).ok());
        Ok(Parsed {
            inputs: self,
            sha256,
            next,
            previous,
            warnings,
        })
    }
}

/// A staged write: the output file, or the cache with its lock.
enum Staging {
    File(atomic::Staged),
    Cache(cache::StagedCache),
}

impl<'i> Parsed<'i> {
    /// Plans the update into `cache` (or `options.output`) and applies
    /// it. On failure nothing was written. A dry run of a document that is
    /// refused shows what the refusal is about: its report comes with the
    /// refusal, to follow it.
    pub fn apply(
        &self,
        cache: &CacheFiles,
        options: &UpdateOptions,
    ) -> Result<(UpdateReport<'_>, Option<Failure>), Failure> {
        let inputs = self.inputs;
        let fail = |cause: Cause| inputs.fail(cause);
        let up_to_date = inputs.up_to_date();
        let action = plan::action(&options.output, options.dry_run, up_to_date);
        let staged = match action {
            Action::Write => Some(stage(cache, &options.output, inputs.bytes())),
            Action::Confirm | Action::Nothing => None,
        };
        // Staged into the cache, this run holds the folder lock: what is
        // remembered is read again, as it was last written (a refresh may
        // have taught it a place since), and no writer changes it until
        // the commit.
        let memory = match &staged {
            Some(Ok(Staging::Cache(_))) if !inputs.rebuild_memory => {
                memory::read(cache).map_err(|why| fail(Cause::Review(why.to_string())))?
            }
            _ => inputs.memory.clone(),
        };
        let review = self
            .review(cache, &options.output, memory)
            .map_err(|e| e.to_string());
        let allowed = Allowed {
            shrink: options.allow_shrink,
            downgrade: options.allow_downgrade,
            key_move: options.allow_key_move,
        };
        let (review, moved) = match plan::allow(review, allowed, inputs.embedded, options.dry_run) {
            Ok(allowed) => allowed,
            Err(refusal @ Cause::Refused(_)) if options.dry_run => {
                let report = UpdateReport {
                    refused: true,
                    catalog: None,
                    ..self.report(cache, options, action, None, Vec::new())
                };
                return Ok((report, Some(fail(refusal))));
            }
            Err(cause) => return Err(fail(cause)),
        };
        let fail_output = |cause: Cause| match &options.output {
            Output::File(path) => Failure::new(path.display(), cause),
            _ => fail(cause),
        };
        let staged = staged.transpose().map_err(|e| fail_output(e.into()))?;
        let settled = self.commit(cache, options, staged, action, &review)?;
        Ok((self.report(cache, options, action, settled, moved), None))
    }

    /// The valid document the new one replaces, the same bytes standing
    /// for themselves.
    fn previous(&self) -> Option<&Catalog> {
        let same = self.inputs.up_to_date().then_some(&self.next);
        self.previous.as_ref().or(same)
    }

    /// The previous document to compare with: not the embedded snapshot
    /// standing in for no cache.
    fn baseline(&self) -> Option<&Catalog> {
        self.previous().filter(|_| !self.inputs.stand_in())
    }

    /// The review of the new document going to `output`, against `memory`
    /// (the memory file's; `None`: none there) and what it replaces.
    fn review(
        &self,
        cache: &CacheFiles,
        output: &Output,
        memory: Option<Memory>,
    ) -> Result<Review, crate::trust::guard::Unreviewable> {
        let into = match output {
            Output::Cache => Destination::Cache,
            Output::File(_) | Output::Stdout => Destination::File,
        };
        let previous = self.baseline();
        let known = policy::known(cache, into, memory, previous)?;
        let replacing = Replacing {
            target: cache.target,
            into,
            previous,
            known: &known,
            state_signed: self.cached().and_then(|c| c.state.as_ref()?.signed_at),
        };
        policy::review(&replacing, &self.next, self.inputs.signed_at)
    }

    fn cached(&self) -> Option<&Cached> {
        self.inputs.cached.as_ref()
    }

    /// Commits what `action` says (`staged`, when it wrote): the output
    /// file with its signature, or the cache with what its memory learns
    /// first (should the rename not happen, the memory knows of places a
    /// person approved, no fewer); or only the confirmation of the cache.
    /// The URL of a held refresh it settled.
    fn commit(
        &self,
        cache: &CacheFiles,
        options: &UpdateOptions,
        staged: Option<Staging>,
        action: Action,
        review: &Review,
    ) -> Result<Option<String>, Failure> {
        let inputs = self.inputs;
        let fail = |cause: Cause| inputs.fail(cause);
        let applied = Applied {
            target: cache.target,
            next: &self.next,
            review,
            label: &inputs.label,
            embedded: inputs.embedded,
            signed_at: inputs.signed_at,
        };
        let rebuilt = || trust::hyper::rebuilt(cache, self.baseline());
        let learn = |memory: &mut Memory| policy::learn(memory, &applied);
        let record = || match inputs.rebuild_memory {
            true => memory::rebuild(cache, rebuilt, learn),
            false => memory::record(cache, rebuilt, learn),
        };
        match (staged, action) {
            (Some(Staging::File(staged)), _) => {
                let Output::File(path) = &options.output else {
                    return Ok(None);
                };
                let fail_output = |e: atomic::WriteError| Failure::new(path.display(), e);
                staged.commit().map_err(fail_output)?;
                // A signed catalog goes on with its signature, which a
                // client pinning the key will look for beside it.
                if let Some(signature) = &inputs.signature {
                    let mut name = path.as_os_str().to_owned();
                    name.push(SIGNATURE_SUFFIX);
                    atomic::write_atomically(Path::new(&name), signature, true)
                        .map_err(fail_output)?;
                }
                Ok(None)
            }
            (Some(Staging::Cache(staged)), _) => {
                record().map_err(|e| fail(e.into()))?;
                staged.commit(&self.state()).map_err(|e| fail(e.into()))?;
                Ok(None)
            }
            (None, Action::Confirm) => {
                cache::locked(cache, LOCK_WAIT, record).map_err(|e| fail(e.into()))?;
                match self.cached() {
                    Some(cached) => self.confirm(cache, cached).map_err(|e| fail(e.into())),
                    None => Ok(None),
                }
            }
            (None, _) => Ok(None),
        }
    }

    /// The state of the new cache: a person asked for these bytes, so they
    /// are current.
    fn state(&self) -> CacheState {
        CacheState {
            sha256: self.sha256.clone(),
            validators: self.inputs.loaded.validators.clone(),
            source: self.inputs.label.clone(),
            fetched_at: state::now(),
            confirmed_at: Some(state::now()),
            signed_at: self.inputs.signed_at,
            ..CacheState::default()
        }
    }

    /// Records that the cache, `cached` when it was read and exactly what
    /// the source brought, is current, with the validators a server sent
    /// with it; nothing when another program replaced it since. A person
    /// who asks for the catalog in use keeps it: a held refresh is
    /// settled, and its URL returned.
    fn confirm(
        &self,
        cache: &CacheFiles,
        cached: &Cached,
    ) -> Result<Option<String>, atomic::WriteError> {
        let inputs = self.inputs;
        let mut settled = None;
        cache::update_state(cache, cached, LOCK_WAIT, |state| {
            settled = state.keep_over_held();
            if !inputs.loaded.validators.is_empty() {
                state.validators = inputs.loaded.validators.clone();
                state.source = inputs.label.clone();
            }
            state.confirmed_at = Some(state::now());
            if inputs.signed_at.is_some() {
                state.signed_at = inputs.signed_at;
            }
        })?;
        Ok(settled)
    }

    /// What the update did.
    fn report(
        &self,
        cache: &CacheFiles,
        options: &UpdateOptions,
        action: Action,
        settled: Option<String>,
        mut moved: Vec<Warning>,
    ) -> UpdateReport<'_> {
        let inputs = self.inputs;
        let mut notices = inputs.notices.clone();
        notices.append(&mut moved);
        let target = match &options.output {
            Output::Cache => cache.catalog.clone(),
            Output::File(path) => path.clone(),
            Output::Stdout => PathBuf::from("standard output"),
        };
        let replaced = self.cached().map(|c| Replaced {
            source: c
                .state
                .as_ref()
                .map(|s| s.source.clone())
                // Another program's: where it came from is not known.
                .filter(|s| !s.is_empty() && s != trust::foreign::FOREIGN_SOURCE),
            written_at: c.written_at(),
            stand_in: c.is_stand_in(),
        });
        UpdateReport {
            source: inputs.label.clone(),
            providers: self.next.providers.len(),
            models: self.next.model_count(),
            target,
            written: action == Action::Write,
            up_to_date: inputs.up_to_date(),
            sha256: self.sha256.clone(),
            signed_at: inputs.signed_at,
            signed_by: inputs
                .signature
                .as_deref()
                .filter(|_| inputs.signed_at.is_some())
                .and_then(signature::key_id),
            replaced,
            settled,
            changes: self.previous().map(|p| changes::compare(p, &self.next)),
            // Every warning in one list (JSON, a report); the notices also
            // on their own, for a quiet run.
            warnings: notices
                .iter()
                .cloned()
                .chain(inputs.warnings.iter().cloned())
                .chain(self.warnings.iter().cloned().map(Warning::Catalog))
                .collect(),
            notices,
            catalog: (options.output == Output::Stdout).then_some(inputs.bytes()),
            refused: false,
        }
    }
}

/// Writes `bytes` beside the target of `output`, flushed (visible only
/// with the rename, once they passed): the cache under its lock.
fn stage(cache: &CacheFiles, output: &Output, bytes: &[u8]) -> Result<Staging, atomic::WriteError> {
    match output {
        Output::File(path) => atomic::stage(path, bytes, true).map(Staging::File),
        Output::Cache | Output::Stdout => {
            cache::stage_cache(cache, bytes, LOCK_WAIT).map(Staging::Cache)
        }
    }
}
