//! A skipped command as a warning may show it: its words, with every
//! value that may be a secret shown as `***`.
//!
//! Safe by construction: a word is shown only where its place says it is
//! harmless, read as Crush's `applyFlags` reads a config command's flags
//! (`internal/shellconfig/flags.go`: each flag takes a fixed number of
//! words, and an unknown flag ends the command). Everything else is
//! hidden, so a flag nobody listed hides its value rather than shows it.

/// What a flag of Crush's config commands takes, as far as showing it
/// goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Takes {
    /// Nothing (`--think`).
    Nothing,
    /// A name, an id or a type: shown.
    Name,
    /// A URL: shown without its user information, query or fragment.
    Url,
    /// A name and a value (`--env NAME VALUE`): the name shown when it
    /// reads as one, the value hidden.
    Entry,
    /// Free-form values, everything after it hidden (`--args`, which
    /// is often followed by a program's own flags).
    Rest,
    /// One value, hidden: a secret, a command, JSON, or a boolean or a
    /// number, which is not worth telling apart.
    Hidden,
}

/// What `flag` takes, for the flags of Crush's `provider`, `model`, `mcp`,
/// `lsp` and `hook` commands; `None` for a flag Crush does not know.
fn takes(flag: &str) -> Option<Takes> {
    Some(match flag {
        "--think" => Takes::Nothing,
        "--name" | "--type" | "--reasoning-effort" | "--filetypes" => Takes::Name,
        "--disabled-tools" | "--enabled-tools" | "--root-markers" => Takes::Name,
        "--base-url" | "--url" => Takes::Url,
        "--env" | "--extra-header" | "--header" => Takes::Entry,
        "--args" => Takes::Rest,
        // Keys and secrets, commands, free-form text and JSON.
        "--api-key" | "--oauth-client-id" | "--oauth-client-secret" => Takes::Hidden,
        "--command" | "--matcher" | "--system-prompt-prefix" => Takes::Hidden,
        "--extra-body" | "--provider-options" | "--init-options" | "--options" => Takes::Hidden,
        // Booleans and numbers.
        "--disable" | "--disabled" | "--flat-rate" | "--discover-models" => Takes::Hidden,
        "--oauth" | "--can-reason" | "--supports-images" | "--timeout" => Takes::Hidden,
        "--oauth-callback-port" | "--context-window" | "--default-max-tokens" => Takes::Hidden,
        "--max-tokens" | "--top-k" | "--temperature" | "--top-p" => Takes::Hidden,
        "--frequency-penalty" | "--presence-penalty" | "--price-input" => Takes::Hidden,
        "--price-output" | "--price-cache-create" | "--price-cache-hit" => Takes::Hidden,
        _ => return None,
    })
}

/// How many words the flag `flag` of a config command takes after it;
/// `None` for a flag Crush does not know, or `--args`, which takes all
/// that follow (and is no flag of `provider`).
pub(super) fn values_taken(flag: &str) -> Option<usize> {
    match takes(flag)? {
        Takes::Nothing => Some(0),
        Takes::Entry => Some(2),
        Takes::Rest => None,
        _ => Some(1),
    }
}

const HIDDEN: &str = "***";

/// The words of a command joined by spaces, its secrets hidden: the
/// words before its first flag (the command, its subcommand and names)
/// shown ([`positional`]); each flag shown with what it takes
/// ([`takes`]), also when written `--flag=VALUE`; from a word where a
/// flag should stand that is no flag Crush knows, Crush reads nothing
/// more, and nothing more is shown.
pub(super) fn shown_without_secrets(texts: &[&str]) -> String {
    let mut rest = texts.iter().copied().peekable();
    let mut shown = Vec::new();
    while let Some(word) = rest.next_if(|t| t.len() < 2 || !t.starts_with('-')) {
        shown.push(positional(word));
    }
    while let Some(word) = rest.next() {
        let (flag, inline) = match word.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (word, None),
        };
        let Some(kind) = takes(flag) else {
            shown.push(if flag_shaped(word) { word } else { HIDDEN }.to_string());
            break;
        };
        if let Some(value) = inline {
            shown.push(format!("{flag}={}", value_shown(kind, value)));
            continue;
        }
        shown.push(flag.to_string());
        let count = values_taken(flag).unwrap_or(texts.len());
        for (i, value) in rest.by_ref().take(count).enumerate() {
            // An entry's name, when it reads as one.
            let name = kind == Takes::Entry && i == 0 && is_plain(value);
            shown.push(if name {
                value.to_string()
            } else {
                value_shown(kind, value)
            });
        }
    }
    shown.extend(rest.map(|_| HIDDEN.to_string()));
    shown.join(" ")
}

/// A name, id or type, e.g. an entry's name (`X-Token`).
fn is_plain(text: &str) -> bool {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_.".contains(c);
    !text.is_empty() && text.chars().all(plain)
}

/// A flag's value as it may be shown.
fn value_shown(kind: Takes, value: &str) -> String {
    match kind {
        Takes::Name => positional(value),
        Takes::Url if value.contains("://") => url_shown(value),
        _ => HIDDEN.to_string(),
    }
}

/// A word that is not a flag's secret value: an assignment's value and a
/// URL's secrets hidden.
pub(super) fn positional(text: &str) -> String {
    match text.split_once('=') {
        Some((name, _)) if super::lex::is_name(name) => format!("{name}={HIDDEN}"),
        _ if text.contains("://") => url_shown(text),
        _ => text.to_string(),
    }
}

/// Whether `text` reads as a flag's name (`--token`, `-u`), which says
/// nothing secret; `-pSECRET` does not.
fn flag_shaped(text: &str) -> bool {
    let name = text
        .strip_prefix("--")
        .or_else(|| text.strip_prefix('-').filter(|n| n.len() == 1));
    let plain = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    name.is_some_and(|n| !n.is_empty() && n.chars().all(plain))
}

/// A URL, as written, without its user information (`***@host`), query
/// (`?***`) or fragment (`#***`), where keys and tokens travel. Read as
/// text, not parsed, so that what is no valid URL loses them too.
fn url_shown(text: &str) -> String {
    let start = text.find("://").map_or(0, |i| i + 3);
    let rest = &text[start..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, after) = rest.split_at(authority_end);
    let host = match authority.rfind('@') {
        Some(at) => format!("{HIDDEN}@{}", &authority[at + 1..]),
        None => authority.to_string(),
    };
    let (path, tail) = after.split_at(after.find(['?', '#']).unwrap_or(after.len()));
    let tail = match tail.chars().next() {
        Some(mark) => format!("{mark}{HIDDEN}"),
        None => String::new(),
    };
    format!("{}{host}{path}{tail}", &text[..start])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skipped_commands_secrets_are_not_shown() {
        let shown = |text: &str| shown_without_secrets(&text.split(' ').collect::<Vec<_>>());
        assert_eq!(
            shown("env provider add x --api-key=K --env N V --api-key"),
            "env provider add x --api-key=*** --env N *** --api-key"
        );
        // `--name` takes `--api-key` as its value, as Crush reads it.
        assert_eq!(
            shown("provider add x --name --api-key --url http://a:P@h"),
            "provider add x --name --api-key --url http://***@h"
        );
        assert_eq!(
            shown("mcp add --url https://u:P@h/"),
            "mcp add --url https://***@h/"
        );
        assert_eq!(shown("option a x=1"), "option a x=***");
        assert_eq!(
            shown("provider add x --timeout 5s"),
            "provider add x --timeout ***"
        );
        assert_eq!(
            shown("model x --think --api-key K"),
            "model x --think --api-key ***"
        );
        assert_eq!(url_shown("h?k=v#f"), "h?***");
        assert_eq!(url_shown("https://h#f"), "https://h#***");
    }
}
