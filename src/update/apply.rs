//! The one application of a new document, for a person's update and a
//! refresh alike ([`Change::apply`]): staged beside the cache under its
//! folder lock, reviewed against what is remembered of where keys went as
//! it is then, judged by who asked ([`By`]: a person's command refuses
//! what they did not allow, a refresh holds it for the next start to
//! tell), remembered, and committed, or the cache only confirmed. And an
//! update's inputs parsed ([`Parsed`]) and applied so.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::read::Inputs;
use super::{LOCK_WAIT, Output, Replaced, UpdateOptions, UpdateReport, Warning};
use crate::catalog::{Catalog, Diff, Target, changes};
use crate::error::{Cause, Failure};
use crate::fetch::source::Source;
use crate::store::atomic::{self, WriteError};
use crate::store::cache::{self, CacheFiles, Cached, Seen};
use crate::store::digest::{self, hex};
use crate::store::state::{self, CacheState, Held};
use crate::trust::guard::{Review, Unreviewable};
use crate::trust::policy::{self, Applied, Destination, Replacing};
use crate::trust::signature::{self, SIGNATURE_SUFFIX};
use crate::trust::{foreign, memory};

/// What a change does to its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Write the new document.
    Write,
    /// The cache already holds these bytes: only the confirmation (and
    /// what the memory learns) is new.
    Confirm,
    /// Nothing: a dry run, standard output, or an output file that holds
    /// these bytes already. The review is made all the same.
    Nothing,
}

/// What an update to `output` does, asked for a dry run or not, the
/// target holding the same bytes already or not.
pub(crate) fn action(output: &Output, dry_run: bool, up_to_date: bool) -> Action {
    match output {
        _ if dry_run => Action::Nothing,
        Output::Stdout => Action::Nothing,
        _ if !up_to_date => Action::Write,
        Output::Cache => Action::Confirm,
        Output::File(_) => Action::Nothing,
    }
}

/// Who asked for a change, and so what becomes of what its review finds.
#[derive(Debug, Clone)]
pub(crate) enum By<'o> {
    /// A person's command, with its options: what they did not allow
    /// (`--allow-shrink`, ...) is refused, naming the flag that allows it
    /// (the embedded snapshot, which they installed, needs none for a
    /// shrink or a key move); a memory that cannot be read is rebuilt when
    /// `rebuild` (by the embedded snapshot, the way back), else a refusal
    /// too.
    Person {
        /// The command's options.
        options: &'o UpdateOptions,
        /// Whether the memory is rebuilt.
        rebuild: bool,
    },
    /// A refresh: what needs a person is held, and nothing is written
    /// over another document than the one it read (a person's update made
    /// meanwhile is never replaced by an older answer).
    Refresh(Seen),
}

/// Why a change was not applied.
#[derive(Debug)]
pub(crate) enum NotApplied {
    /// A person did not allow what the review found, or no review could
    /// be made.
    Refused(Cause),
    /// What a refresh holds back for a person.
    Held(Held),
    /// Another writer replaced the cache since the refresh read it.
    Overtaken,
    /// Reviewed and clear, it could not be written.
    Write(WriteError),
}

impl From<WriteError> for NotApplied {
    fn from(e: WriteError) -> Self {
        NotApplied::Write(e)
    }
}

impl By<'_> {
    /// What `review` (or why none could be made) of a document whose
    /// SHA-256 is `sha256` (the embedded snapshot or not) comes to.
    fn judge(
        &self,
        review: Result<Review, Unreviewable>,
        embedded: bool,
        sha256: &str,
    ) -> Result<Review, NotApplied> {
        let By::Person { options: o, .. } = self else {
            return policy::hold(review, sha256).map_err(NotApplied::Held);
        };
        let review = review.map_err(|why| NotApplied::Refused(Cause::Review(why.to_string())))?;
        let unallowed = review.unallowed(
            o.allow_shrink || embedded,
            o.allow_downgrade,
            o.allow_key_move || embedded,
        );
        match unallowed.is_clear() {
            true => Ok(review),
            false => Err(NotApplied::Refused(Cause::Refused(Box::new(unallowed)))),
        }
    }
}

/// A new document for the cache, valid, and what it replaces.
#[derive(Debug)]
pub(crate) struct Change<'c> {
    /// The cache, whose target says which document.
    pub files: &'c CacheFiles,
    /// The new document's bytes.
    pub bytes: &'c [u8],
    /// The document read from them.
    pub next: &'c Catalog,
    /// The state it is recorded with (its SHA-256, source, validators,
    /// signing time): when written, the cache's; when confirmed, what of
    /// it is new.
    pub state: CacheState,
    /// Whether it is the embedded snapshot.
    pub embedded: bool,
    /// The cache it replaces, when it is one to compare with.
    pub cached: Option<&'c Cached>,
    /// That cache's document, valid, unless the embedded snapshot stands
    /// in for none (nobody chose that one): what it is compared with.
    pub previous: Option<&'c Catalog>,
    /// Who asked.
    pub by: By<'c>,
}

impl Change<'_> {
    /// Applies the change as `action` says: the review, as who asked
    /// allowed it, and the URL of a held refresh a confirmation settled (a
    /// person kept the catalog in use). Under one folder lock: the new
    /// document staged, the memory read as it is now (another writer may
    /// have taught it a place since), the review, what the memory learns
    /// (first: should the rename not happen, it knows of places a person
    /// approved, no fewer), and the commit or the confirmation. A document
    /// that cannot be staged is reviewed all the same: what it finds is
    /// told before the write's failure. A dry run only reviews.
    pub(crate) fn apply(&self, action: Action) -> Result<(Review, Option<String>), NotApplied> {
        let files = self.files;
        let (wait, rebuild) = match self.by {
            By::Person { rebuild, .. } => (LOCK_WAIT, rebuild),
            By::Refresh(_) => (Duration::from_secs(2), false),
        };
        let locked = match action {
            Action::Nothing => None,
            Action::Write => Some(cache::lock(files, Some(self.bytes), wait)),
            Action::Confirm => Some(cache::lock(files, None, wait)),
        };
        if let (Some(Ok(_)), By::Refresh(seen)) = (&locked, &self.by)
            && Seen::now(files) != *seen
        {
            return Err(NotApplied::Overtaken);
        }
        let replacing = Replacing {
            files,
            into: Destination::Cache,
            previous: self.previous,
            state_signed: self.cached.and_then(|c| c.state.as_ref()?.signed_at),
        };
        let memory = if rebuild {
            Ok(None)
        } else {
            memory::read(files).map_err(Unreviewable::from)
        };
        // Read under the lock the memory learns under: not read again.
        let now = memory.as_ref().ok().filter(|_| !rebuild).cloned();
        let review =
            memory.and_then(|m| policy::review(&replacing, m, self.next, self.state.signed_at));
        let review = self.by.judge(review, self.embedded, &self.state.sha256)?;
        let Some(locked) = locked.transpose()? else {
            return Ok((review, None));
        };
        let applied = Applied {
            next: self.next,
            review: &review,
            label: &self.state.source,
            embedded: self.embedded,
            signed_at: self.state.signed_at,
        };
        policy::learn(files, self.previous, &applied, now, rebuild)?;
        let mut settled = None;
        match action {
            Action::Write => locked.commit(self.state.clone())?,
            _ => drop(locked.change_state(self.cached, |state| {
                settled = state.keep_over_held();
                let new = &self.state;
                if !new.validators.is_empty() {
                    state.validators = new.validators.clone();
                    state.source = new.source.clone();
                }
                state.confirmed_at = new.confirmed_at;
                state.signed_at = new.signed_at.or(state.signed_at);
            })?),
        }
        Ok((review, settled))
    }
}

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
}

impl Inputs {
    /// Checks the bytes against `options.sha256`, and reads the new
    /// document (of `target`) and the one it replaces, letting go of the
    /// bytes of the latter.
    pub fn parse(
        &mut self,
        target: Target,
        options: &UpdateOptions,
    ) -> Result<Parsed<'_>, Failure> {
        let sha256 = hex(&digest::sha256(self.bytes()));
        if let Some(expected) = &options.sha256
            && !expected.eq_ignore_ascii_case(&sha256)
        {
            return Err(self.fail(Cause::Digest {
                expected: expected.to_ascii_lowercase(),
                actual: sha256,
            }));
        }
        // A document that shares most of its bytes with the new one is read
        // after it, where they differ, of which only the bytes between what
        // they share are kept ([`Catalog::previous`]); one that does not,
        // first and whole. Either way its bytes are let go of before the new
        // one is read: two 50 MB files and two catalogs are never all held
        // at once (136 MB at the peak for two unrelated ones, not 183).
        let old = self.take_replaced().filter(|_| !self.up_to_date);
        let diff = (old.as_deref().map(|old| Diff::of(self.bytes(), old)))
            .filter(Diff::mostly_shared)
            .map(Diff::into_owned);
        let whole = old.filter(|_| diff.is_none());
        let whole = whole.and_then(|old| target.validate(&old).ok());
        let next = target
            .validate(self.bytes())
            .map_err(|e| self.fail(Cause::invalid(target, e)))?;
        let previous = match diff {
            Some(diff) => next.previous(target, self.bytes(), &diff),
            None => whole,
        };
        Ok(Parsed {
            inputs: self,
            sha256,
            next,
            previous,
        })
    }
}

impl<'i> Parsed<'i> {
    /// Applies the update into `cache` (or `options.output`). On failure
    /// nothing was written. A dry run of a document that is refused shows
    /// what the refusal is about: its report comes with the refusal, to
    /// follow it.
    pub fn apply(
        &self,
        cache: &CacheFiles,
        options: &UpdateOptions,
    ) -> Result<(UpdateReport<'_>, Option<Failure>), Failure> {
        let inputs = self.inputs;
        let action = action(&options.output, options.dry_run, inputs.up_to_date);
        let rebuild = inputs.rebuild_memory;
        let by = By::Person { options, rebuild };
        let applied = match &options.output {
            Output::Cache => self.change(cache, by).apply(action),
            Output::File(_) | Output::Stdout => self.to_file(cache, options, action, &by),
        };
        let (review, settled) = match applied {
            Ok(applied) => applied,
            Err(NotApplied::Refused(refusal @ Cause::Refused(_))) if options.dry_run => {
                let report = UpdateReport {
                    refused: true,
                    catalog: None,
                    ..self.report(cache, options, action, None, None)
                };
                return Ok((report, Some(inputs.fail(refusal))));
            }
            Err(NotApplied::Refused(cause)) => return Err(inputs.fail(cause)),
            Err(NotApplied::Write(e)) => match &options.output {
                Output::File(path) => return Err(Failure::new(path.display(), e)),
                _ => return Err(inputs.fail(e)),
            },
            // A person's update refuses rather than holds, and is no
            // refresh that another writer overtakes; said, never a panic.
            Err(NotApplied::Held(held)) => {
                return Err(inputs.fail(Cause::Review(held.changes.join("; "))));
            }
            Err(NotApplied::Overtaken) => {
                let why = "another program replaced the cache meanwhile; run the update again";
                return Err(inputs.fail(Cause::Review(why.into())));
            }
        };
        Ok((
            self.report(cache, options, action, settled, Some(&review)),
            None,
        ))
    }

    /// The change into the cache: a person asked for these bytes, so
    /// they are current.
    fn change<'c>(&'c self, cache: &'c CacheFiles, by: By<'c>) -> Change<'c> {
        let inputs = self.inputs;
        // A file named from where it was read: `--status` is read elsewhere.
        let source = match &inputs.source {
            Source::File(path) => (std::path::absolute(path).as_ref())
                .unwrap_or(path)
                .display()
                .to_string(),
            source => source.to_string(),
        };
        let now = state::now();
        Change {
            files: cache,
            bytes: inputs.bytes(),
            next: &self.next,
            state: CacheState {
                sha256: self.sha256.clone(),
                validators: inputs.loaded.validators.clone(),
                source,
                fetched_at: now,
                confirmed_at: Some(now),
                signed_at: inputs.signed_at,
                ..CacheState::default()
            },
            embedded: inputs.embedded(),
            cached: inputs.cached.as_ref(),
            previous: self.baseline(),
            by,
        }
    }

    /// Into another file, or standard output: reviewed against what it
    /// replaces alone, then written with its signature, which a client
    /// pinning the key will look for beside it.
    fn to_file(
        &self,
        cache: &CacheFiles,
        options: &UpdateOptions,
        action: Action,
        by: &By<'_>,
    ) -> Result<(Review, Option<String>), NotApplied> {
        let inputs = self.inputs;
        let replacing = Replacing {
            files: cache,
            into: Destination::File,
            previous: self.baseline(),
            state_signed: None,
        };
        let review = policy::review(&replacing, None, &self.next, inputs.signed_at);
        let review = by.judge(review, inputs.embedded(), &self.sha256)?;
        if let (Output::File(path), Action::Write) = (&options.output, action) {
            atomic::write_atomically(path, inputs.bytes(), true)?;
            if let Some(signature) = &inputs.signature {
                let mut name = path.as_os_str().to_owned();
                name.push(SIGNATURE_SUFFIX);
                atomic::write_atomically(Path::new(&name), signature, true)?;
            }
        }
        Ok((review, None))
    }

    /// The valid document the new one replaces, the same bytes standing
    /// for themselves.
    fn previous(&self) -> Option<&Catalog> {
        let same = self.inputs.up_to_date.then_some(&self.next);
        self.previous.as_ref().or(same)
    }

    /// The previous document to compare with: not the embedded snapshot
    /// standing in for no cache.
    fn baseline(&self) -> Option<&Catalog> {
        let stand_in = self.inputs.stand_in;
        self.previous().filter(|_| !stand_in)
    }

    /// What the update did; `review`, when it went on, tells the key moves
    /// a person allowed.
    fn report(
        &self,
        cache: &CacheFiles,
        options: &UpdateOptions,
        action: Action,
        settled: Option<String>,
        review: Option<&Review>,
    ) -> UpdateReport<'_> {
        let inputs = self.inputs;
        let moved = review.into_iter().flat_map(|r| &r.moves);
        let notices: Vec<Warning> = (inputs.notices.iter().cloned())
            .chain(moved.map(|moved| Warning::KeyMoveAllowed {
                moved: moved.clone(),
                dry_run: options.dry_run,
            }))
            .collect();
        let target = match &options.output {
            Output::Cache => cache.catalog.clone(),
            Output::File(path) => path.clone(),
            Output::Stdout => PathBuf::from("standard output"),
        };
        let replaced = inputs.cached.as_ref().map(|c| Replaced {
            source: (c.state.as_ref())
                .map(|s| s.source.clone())
                // Another program's: where it came from is not known.
                .filter(|s| !s.is_empty() && s != foreign::FOREIGN_SOURCE),
            written_at: c.written_at(),
            stand_in: inputs.stand_in,
        });
        UpdateReport {
            source: inputs.source.to_string(),
            providers: self.next.providers.len(),
            models: self.next.model_count(),
            target,
            written: action == Action::Write,
            up_to_date: inputs.up_to_date,
            sha256: self.sha256.clone(),
            signed_at: inputs.signed_at,
            signed_by: (inputs.signature.as_deref())
                .filter(|_| inputs.signed_at.is_some())
                .and_then(signature::key_id),
            replaced,
            settled,
            changes: self.previous().map(|p| changes::compare(p, &self.next)),
            // Every warning in one list (JSON, a report); the notices also
            // on their own, for a quiet run.
            warnings: (notices.iter().cloned())
                .chain(inputs.warnings.iter().cloned())
                .chain(self.next.warnings.iter().cloned().map(Warning::Catalog))
                .collect(),
            notices,
            catalog: (options.output == Output::Stdout).then_some(inputs.bytes()),
            refused: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{self, embedded};
    use crate::store::state::Need;
    use crate::trust::guard::Downgrade;
    use crate::trust::memory::Memory;

    /// A person's options that allow nothing, into the cache.
    fn allow_nothing() -> UpdateOptions {
        UpdateOptions {
            dry_run: false,
            output: Output::Cache,
            sha256: None,
            timeout: Duration::from_secs(60),
            keys: None,
            signature: None,
            allow_shrink: false,
            allow_downgrade: false,
            allow_key_move: false,
            watch: Default::default(),
            bearer: None,
        }
    }

    /// Every combination of target, dry run and bytes already there.
    #[test]
    fn what_an_update_does() {
        let file = Output::File(PathBuf::from("out.json"));
        let cases = [
            (Output::Cache, false, false, Action::Write),
            (Output::Cache, false, true, Action::Confirm),
            (Output::Cache, true, false, Action::Nothing),
            (Output::Cache, true, true, Action::Nothing),
            (file.clone(), false, false, Action::Write),
            (file.clone(), false, true, Action::Nothing),
            (file, true, false, Action::Nothing),
            (Output::Stdout, false, false, Action::Nothing),
            (Output::Stdout, true, false, Action::Nothing),
        ];
        for (output, dry_run, up_to_date, expected) in cases {
            assert_eq!(
                action(&output, dry_run, up_to_date),
                expected,
                "{output:?}, dry run {dry_run}, up to date {up_to_date}"
            );
        }
    }

    /// What a person did not allow is refused, naming it; a review that
    /// could not be made too; the embedded snapshot needs no flag for a
    /// shrink. A refresh holds the same findings instead.
    #[test]
    fn a_person_refuses_what_a_refresh_holds() {
        let none = allow_nothing();
        let person = |options| By::Person {
            options,
            rebuild: false,
        };
        let why = || Err(Unreviewable::TooManyPlaces);
        let refused = person(&none).judge(why(), true, "ab");
        let words = Unreviewable::TooManyPlaces.to_string();
        assert!(matches!(refused, Err(NotApplied::Refused(Cause::Review(w))) if w == words));
        let downgrade = || {
            Ok(Review {
                downgrade: Some(Downgrade {
                    signed: 1,
                    newest: 2,
                }),
                ..Review::default()
            })
        };
        let refused = person(&none).judge(downgrade(), true, "ab");
        assert!(matches!(
            refused,
            Err(NotApplied::Refused(Cause::Refused(_)))
        ));
        let allowed = UpdateOptions {
            allow_downgrade: true,
            ..allow_nothing()
        };
        assert!(person(&allowed).judge(downgrade(), false, "ab").is_ok());
        let refresh = By::Refresh(Seen::now(&CacheFiles::in_dir("/nonexistent")));
        let Err(NotApplied::Held(held)) = refresh.judge(downgrade(), false, "ab") else {
            panic!("not held")
        };
        assert_eq!(
            (held.needs, held.sha256.as_deref()),
            (vec![Need::Downgrade], Some("ab"))
        );
    }

    /// The real catalog and a provider whose key goes to `endpoint`.
    fn with_fresh(endpoint: &str) -> String {
        let real = std::str::from_utf8(embedded::catalog_bytes()).unwrap();
        let end = real.rfind(']').unwrap();
        format!(
            r#"{},{{"id":"fresh","name":"F","api_key":"$FRESH_API_KEY","api_endpoint":"{endpoint}"}}]"#,
            &real[..end]
        )
    }

    fn refresh<'c>(
        files: &'c CacheFiles,
        bytes: &'c str,
        next: &'c Catalog,
        cached: Option<&'c Cached>,
        seen: Seen,
    ) -> Change<'c> {
        Change {
            files,
            bytes: bytes.as_bytes(),
            next,
            state: CacheState {
                sha256: hex(&digest::sha256(bytes.as_bytes())),
                ..CacheState::default()
            },
            embedded: false,
            cached,
            previous: None,
            by: By::Refresh(seen),
        }
    }

    /// The review is made once the folder is locked for the write,
    /// against what is remembered then: a place a person's update taught
    /// the memory after the refresh read the cache makes its catalog,
    /// which sends the variable elsewhere, held, and nothing is written.
    #[test]
    fn a_change_is_reviewed_against_what_is_remembered_once_locked() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        let seen = Seen::now(&files);
        let taught = with_fresh("https://fresh.example");
        let taught = catalog::validate(taught.as_bytes()).unwrap();
        let _locked = cache::lock(&files, None, LOCK_WAIT).unwrap();
        let learn = |m: &mut Memory| m.learn(&taught);
        memory::write(&files, None, || Memory::rebuilt(None), learn, false).unwrap();
        drop(_locked);
        let bytes = with_fresh("https://collector.evil.example");
        let next = catalog::validate(bytes.as_bytes()).unwrap();
        let change = refresh(&files, &bytes, &next, None, seen);
        let Err(NotApplied::Held(held)) = change.apply(Action::Write) else {
            panic!("written")
        };
        assert_eq!(
            held.changes,
            [
                "provider \"fresh\" would send $FRESH_API_KEY to https://collector.evil.example:443, where it was never sent before (only to https://fresh.example:443)"
            ]
        );
        assert_eq!(held.needs, [Need::KeyMove]);
        assert!(!files.catalog.exists());
    }

    /// The lost update: a person's update that replaced the cache while a
    /// refresh fetched is never overwritten by the refresh's older answer;
    /// nothing is written. Over the cache it read, the same answer is.
    #[test]
    fn a_refresh_writes_only_over_the_cache_it_read() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        let real = std::str::from_utf8(embedded::catalog_bytes()).unwrap();
        let with = |name: &str| real.replacen("\"name\": \"", &format!("\"name\": \"{name} "), 1);
        let (c1, c2, c3) = (with("c1"), with("c2"), with("c3"));
        let written = |bytes: &str| CacheState {
            sha256: hex(&digest::sha256(bytes.as_bytes())),
            source: "test".into(),
            ..CacheState::default()
        };
        cache::write(&files, c1.as_bytes(), &written(&c1), LOCK_WAIT).unwrap();
        // The refresh reads c1 and fetches c2; meanwhile a person applies c3.
        let seen = Seen::now(&files);
        let cached = cache::read(&files, cache::Bytes::Read).vouched().unwrap();
        cache::write(&files, c3.as_bytes(), &written(&c3), LOCK_WAIT).unwrap();
        let next = catalog::validate(c2.as_bytes()).unwrap();
        let change = refresh(&files, &c2, &next, Some(&cached), seen);
        assert!(matches!(
            change.apply(Action::Write),
            Err(NotApplied::Overtaken)
        ));
        assert_eq!(std::fs::read_to_string(&files.catalog).unwrap(), c3);
        let cached = cache::read(&files, cache::Bytes::Read).vouched().unwrap();
        let change = refresh(&files, &c2, &next, Some(&cached), Seen::now(&files));
        change.apply(Action::Write).unwrap();
        assert_eq!(std::fs::read_to_string(&files.catalog).unwrap(), c2);
    }

    #[test]
    fn a_digest_is_compared_in_any_case() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        let sha256 = hex(&digest::sha256(embedded::catalog_bytes()));
        let options = |sha256: &str| UpdateOptions {
            sha256: Some(sha256.to_owned()),
            ..allow_nothing()
        };
        let source = crate::fetch::source::Source::Embedded;
        let mut inputs = super::super::read(&source, &files, &options(&sha256)).unwrap();
        assert!(
            inputs
                .parse(Target::Catalog, &options(&sha256.to_uppercase()))
                .is_ok()
        );
        let Err(failure) = inputs.parse(Target::Catalog, &options("CD")) else {
            panic!("matched")
        };
        let Cause::Digest { expected, actual } = failure.cause else {
            panic!("{failure:?}")
        };
        assert_eq!((expected, actual), ("cd".to_owned(), sha256));
    }
}
