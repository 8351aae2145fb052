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
#[derive(Clone, Copy)]
enum Takes {
    /// Nothing (`--think`).
    Nothing,
    /// A name, an id or a type: shown.
    Name,
    /// A boolean or a number: shown when it reads as one.
    Typed,
    /// A URL: shown without its user information, query or fragment.
    Url,
    /// A name and a value (`--env NAME VALUE`): the name shown when it
    /// reads as one, the value hidden.
    Entry,
    /// Free-form values, everything after it hidden (`--args`, which
    /// is often followed by a program's own flags).
    Rest,
    /// Anything else: hidden.
    Secret,
}

/// What `flag` takes, for the flags of Crush's `provider`, `model`, `mcp`,
/// `lsp` and `hook` commands; `None` for a flag Crush does not know.
fn takes(flag: &str) -> Option<Takes> {
    Some(match flag {
        "--think" => Takes::Nothing,
        "--name" | "--type" | "--reasoning-effort" | "--disabled-tools" | "--enabled-tools"
        | "--filetypes" | "--root-markers" => Takes::Name,
        "--disable"
        | "--disabled"
        | "--flat-rate"
        | "--discover-models"
        | "--oauth"
        | "--can-reason"
        | "--supports-images"
        | "--timeout"
        | "--oauth-callback-port"
        | "--context-window"
        | "--default-max-tokens"
        | "--max-tokens"
        | "--top-k"
        | "--temperature"
        | "--top-p"
        | "--frequency-penalty"
        | "--presence-penalty"
        | "--price-input"
        | "--price-output"
        | "--price-cache-create"
        | "--price-cache-hit" => Takes::Typed,
        "--base-url" | "--url" => Takes::Url,
        "--env" | "--extra-header" | "--header" => Takes::Entry,
        "--args" => Takes::Rest,
        "--api-key"
        | "--oauth-client-id"
        | "--oauth-client-secret"
        | "--command"
        | "--matcher"
        | "--system-prompt-prefix"
        | "--extra-body"
        | "--provider-options"
        | "--init-options"
        | "--options" => Takes::Secret,
        _ => return None,
    })
}

/// How many words the flag `flag` of a config command takes after it;
/// `None` for a flag Crush does not know, or `--args`, which takes all
/// that follow (and is no flag of `provider`).
pub(super) fn values_taken(flag: &str) -> Option<usize> {
    Some(match takes(flag)? {
        Takes::Nothing => 0,
        Takes::Entry => 2,
        Takes::Rest => return None,
        _ => 1,
    })
}

const HIDDEN: &str = "***";

/// The words of a command joined by spaces, its secrets hidden: the
/// words before its first flag (the command, its subcommand and names)
/// shown, but an assignment's value (`NAME=***`) and a URL's user
/// information, query and fragment; each flag shown with what it takes
/// ([`takes`]), also when written `--flag=VALUE`; from a word where a
/// flag should stand that is no flag Crush knows, Crush reads nothing
/// more, and nothing more is shown.
pub(super) fn shown_without_secrets(texts: &[&str]) -> String {
    let flags_from = texts
        .iter()
        .position(|t| t.len() > 1 && t.starts_with('-'))
        .unwrap_or(texts.len());
    let mut shown: Vec<String> = texts[..flags_from].iter().map(|t| positional(t)).collect();
    let mut rest = texts[flags_from..].iter().copied();
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
        let values: Vec<String> = match kind {
            Takes::Nothing => vec![],
            Takes::Entry => {
                let name = rest.next().map(|n| {
                    let plain = !n.is_empty()
                        && n.chars()
                            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
                    if plain { n } else { HIDDEN }.to_string()
                });
                let value = rest.next().map(|_| HIDDEN.to_string());
                name.into_iter().chain(value).collect()
            }
            Takes::Rest => rest.by_ref().map(|_| HIDDEN.to_string()).collect(),
            _ => rest
                .next()
                .map(|v| value_shown(kind, v))
                .into_iter()
                .collect(),
        };
        shown.extend(values);
    }
    shown.extend(rest.map(|_| HIDDEN.to_string()));
    shown.join(" ")
}

/// A flag's one value as it may be shown.
fn value_shown(kind: Takes, value: &str) -> String {
    let typed = || {
        ["true", "false", "yes", "no"].contains(&value.to_ascii_lowercase().as_str())
            || value.parse::<f64>().is_ok()
    };
    match kind {
        Takes::Name => positional(value),
        Takes::Typed if typed() => value.to_string(),
        Takes::Url if value.contains("://") => url_shown(value),
        _ => HIDDEN.to_string(),
    }
}

/// A word that is not a flag's secret value: an assignment's value and a
/// URL's secrets hidden.
fn positional(text: &str) -> String {
    if let Some((name, _)) = text.split_once('=')
        && super::lex::is_name(name)
    {
        return format!("{name}={HIDDEN}");
    }
    if text.contains("://") {
        url_shown(text)
    } else {
        text.to_string()
    }
}

/// Whether `text` reads as a flag's name (`--token`, `-u`), which says
/// nothing secret; `-pSECRET` does not.
fn flag_shaped(text: &str) -> bool {
    let name = text
        .strip_prefix("--")
        .or_else(|| text.strip_prefix('-').filter(|n| n.len() == 1));
    name.is_some_and(|n| {
        !n.is_empty()
            && n.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    })
}

/// A URL, as written, without its user information (`***@host`), query
/// (`?***`) or fragment (`#***`), where keys and tokens travel. Read as
/// text, not parsed, so that what is no valid URL loses them too.
fn url_shown(text: &str) -> String {
    let start = text.find("://").map_or(0, |i| i + 3);
    let rest = &text[start..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, after) = rest.split_at(authority_end);
    let host = authority.rfind('@').map_or(authority.to_string(), |at| {
        format!("{HIDDEN}@{}", &authority[at + 1..])
    });
    let path_end = after.find(['?', '#']).unwrap_or(after.len());
    let (path, tail) = after.split_at(path_end);
    let tail = tail
        .chars()
        .next()
        .map_or(String::new(), |mark| format!("{mark}{HIDDEN}"));
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
