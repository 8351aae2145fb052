//! Behind a proxy, a failure names the proxy, the variable it came from,
//! and what it did: could not be reached, refused the tunnel (with its
//! status), wanted credentials, closed the connection. The proxies are
//! loopback fakes; the catalog's host is never looked up here.

use std::io::Write;

use crate::common::*;

const TARGET: &str = "https://catalog.mirror.corp.test";

fn through(proxy: &str, args: &[&str]) -> Run {
    Home::new().run_env(args, &[("HTTPS_PROXY", proxy)])
}

#[test]
fn a_proxy_that_cannot_be_reached_is_named_with_its_variable() {
    let proxy = closed_port_url();
    let run = through(&proxy, &["update-providers", TARGET]);
    run.fails_with(&[
        &format!(
            "the proxy {proxy} (from HTTPS_PROXY) cannot be reached: it refused the connection"
        ),
        "check HTTPS_PROXY: is the proxy running, and is its address right?",
    ]);
    assert_plain(&run);
}

#[test]
fn a_proxy_refusing_the_tunnel_is_quoted() {
    let proxy = raw_server(|s| {
        let _ = s.write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
    });
    let run = through(&proxy, &["update-providers", TARGET]);
    run.fails_with(&[
        &format!("the proxy {proxy} (from HTTPS_PROXY) refused the tunnel to catalog.mirror.corp.test:443: it answered 403 Forbidden"),
        "add it to NO_PROXY",
    ]);
    assert_plain(&run);
}

#[test]
fn a_proxy_wanting_credentials_says_where_they_go() {
    let proxy = raw_server(|s| {
        let _ = s.write_all(
            b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"corp\"\r\nContent-Length: 0\r\n\r\n",
        );
    });
    let run = through(&proxy, &["update-providers", TARGET]);
    run.fails_with(&[
        "(from HTTPS_PROXY) wants credentials: it answered 407 Proxy Authentication Required",
        "HTTPS_PROXY=http://user:password@host:port",
    ]);
    assert_plain(&run);
}

#[test]
fn a_proxy_closing_the_connection_is_told_as_such() {
    let proxy = raw_server(|s| {
        let _ = s.shutdown(std::net::Shutdown::Both);
    });
    let run = through(&proxy, &["update-providers", TARGET]);
    run.fails_with(&[&format!(
        "the proxy {proxy} (from HTTPS_PROXY) closed the connection when asked for a tunnel to catalog.mirror.corp.test:443"
    )]);
    assert_plain(&run);
}

/// The start-up's warning carries the same plain cause, then the start-up
/// hint; and credentials in the proxy's URL are never shown.
#[test]
fn start_up_warnings_carry_the_same_cause_without_credentials() {
    let port = closed_port_url();
    let proxy = port.replace("http://", "http://alice:s3cret@");
    let env = [("HTTPS_PROXY", proxy.as_str()), ("CATWALK_URL", TARGET)];
    // Told at once by a start that waits, and by the next start after one
    // that did not.
    let home = Home::new();
    let waited = home.run_env(&["providers", "--json", "--wait"], &env);
    let home = Home::new();
    home.run_env(&["providers", "--json"], &env).ok();
    home.wait_for_refresh(&None);
    let next = home.run_env(&["providers", "--json"], &env);
    for (run, waited) in [(waited, true), (next, false)] {
        run.ok();
        let warning = run.stderr.lines().next().unwrap_or_default();
        assert!(
            warning.contains(&format!(
                "the proxy {port} (from HTTPS_PROXY) cannot be reached"
            )) && warning.contains("using the embedded catalog"),
            "{run:?}"
        );
        // A person who waited is online: the proxy's fix, not the offline
        // one; the next start after a background refresh says both.
        assert_eq!(
            warning.contains("option provider-auto-update false"),
            !waited,
            "{run:?}"
        );
        assert!(!run.stderr.contains("s3cret"), "{run:?}");
        assert_plain(&run);
    }
}
