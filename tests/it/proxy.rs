//! Behind a proxy, a failure names the proxy, the variable it came from,
//! and what it did: could not be reached, refused the tunnel, wanted
//! credentials, closed the connection. The proxies are
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
fn a_proxy_refusing_the_tunnel_is_named() {
    let proxy = raw_server(|s| {
        let _ = s.write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
    });
    let run = through(&proxy, &["update-providers", TARGET]);
    run.fails_with(&[
        &format!("the proxy {proxy} (from HTTPS_PROXY) refused the tunnel to catalog.mirror.corp.test:443"),
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

/// A loopback proxy that reads what goes through it, as one a project
/// could start would: it accepts every tunnel (`CONNECT`), answers its TLS
/// with a certificate for the host asked made by its own CA (which the
/// project's `.env` names in `SSL_CERT_FILE`), and keeps each request's
/// head. Every request it reads is answered 503.
struct Interceptor {
    url: String,
    ca_pem: String,
    heads: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Interceptor {
    fn start() -> Interceptor {
        use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
        use std::io::{BufRead, BufReader};
        use std::sync::{Arc, Mutex};
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
        let leaf_key = KeyPair::generate().unwrap();
        let hosts = ["hyper.charm.land", "catalog.mirror.corp.test"].map(String::from);
        let leaf = CertificateParams::new(hosts.to_vec())
            .unwrap()
            .signed_by(&leaf_key, &ca)
            .unwrap();
        let config = Arc::new(
            rustls::ServerConfig::builder()
                .with_no_client_auth()
                .with_single_cert(
                    vec![leaf.der().clone()],
                    rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
                )
                .unwrap(),
        );
        let heads = Arc::new(Mutex::new(Vec::new()));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let kept = Arc::clone(&heads);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (config, kept) = (Arc::clone(&config), Arc::clone(&kept));
                std::thread::spawn(move || {
                    let head = |reader: &mut dyn BufRead| {
                        let mut head = String::new();
                        let mut line = String::new();
                        while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                            head.push_str(&line);
                            line.clear();
                        }
                        head
                    };
                    let mut stream = stream;
                    let connect = head(&mut BufReader::new(&mut stream));
                    kept.lock().unwrap().push(connect);
                    if stream
                        .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                        .is_err()
                    {
                        return;
                    }
                    let Ok(conn) = rustls::ServerConnection::new(config) else {
                        return;
                    };
                    let mut tls = rustls::StreamOwned::new(conn, stream);
                    let request = head(&mut BufReader::new(&mut tls));
                    kept.lock().unwrap().push(request);
                    let _ = tls.write_all(
                        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                    let _ = tls.flush();
                });
            }
        });
        Interceptor {
            url,
            ca_pem: ca.pem(),
            heads,
        }
    }

    /// The heads it read: each tunnel asked, each request inside one.
    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

/// Issue 35, item 7: no proxy or CA of a project's `.env` carries a
/// credential. The `.env` sets `HTTPS_PROXY` (a proxy the project
/// controls) and `SSL_CERT_FILE` (its CA), which together would let the
/// proxy read the `Authorization: Bearer` header of the start-up's
/// refresh of Hyper's provider. That refresh takes its proxy and CA from
/// the user's own environment (here a proxy of their own that is not
/// running, so that nothing leaves this machine), and says so at the
/// start; a person's `update-providers --source hyper`, or an update from
/// a URL with a password, is refused naming the variables. The proxy sees
/// no credential.
#[tokio::test(flavor = "multi_thread")]
async fn a_projects_dotenv_proxy_and_ca_never_carry_a_credential() {
    let proxy = Interceptor::start();
    let catalog = serve_at(
        "/v2/providers",
        wiremock::ResponseTemplate::new(200).set_body_string(embedded_and_gamma()),
    )
    .await;
    let home = Home::new();
    let ca = home.path().join("project-ca.pem");
    std::fs::write(&ca, &proxy.ca_pem).unwrap();
    std::fs::write(
        home.path().join(".env"),
        format!(
            "HTTPS_PROXY={}\nSSL_CERT_FILE={}\n",
            proxy.url,
            ca.display()
        ),
    )
    .unwrap();
    let dotenv = home.path().canonicalize().unwrap().join(".env");
    let own_proxy = closed_port_url();
    let catwalk = catalog.uri();
    let env = [
        ("HYPER_API_KEY", "sk-users-own"),
        ("CATWALK_URL", catwalk.as_str()),
        // Read after HTTPS_PROXY: the .env's one comes first for a
        // request that carries nothing.
        ("https_proxy", own_proxy.as_str()),
    ];
    let no_credential = || {
        let heads = proxy.heads();
        assert!(
            heads.iter().all(|head| {
                let head = head.to_ascii_lowercase();
                !head.contains("authorization") && !head.contains("sk-users-own")
            }),
            "{heads:?}"
        );
        heads
    };
    let start = home.run_env(&["providers", "--wait"], &env);
    start.ok();
    no_credential();
    let told = words(&start.stderr);
    for (variable, line) in [("HTTPS_PROXY", 1), ("SSL_CERT_FILE", 2)] {
        assert!(
            told.contains(&format!("{variable} at {}:{line}", dotenv.display())),
            "{start:?}"
        );
    }
    assert!(
        told.contains("Hyper's provider carries the Hyper key"),
        "{start:?}"
    );
    let person = home.run_env(&["update-providers", "--source", "hyper"], &env);
    person.fails_with(&[
        &format!("HTTPS_PROXY at {}:1", dotenv.display()),
        &format!("SSL_CERT_FILE at {}:2", dotenv.display()),
        "the Hyper key",
        "set HTTPS_PROXY and SSL_CERT_FILE in your own environment, or remove them from",
    ]);
    let password = "https://alice:s3cret@catalog.mirror.corp.test/v2/providers";
    let person = home.run_env(&["update-providers", password], &env);
    person.fails_with(&["HTTPS_PROXY at", "the user name and password of its URL"]);
    assert!(!person.stderr.contains("s3cret"), "{person:?}");
    // A start whose catalog URL carries a password goes without them too.
    let start = home.run_env(
        &["providers", "--wait"],
        &[
            ("CATWALK_URL", password),
            ("https_proxy", own_proxy.as_str()),
            ("CRUSH_PROVIDER_REFRESH_INTERVAL", "0"),
        ],
    );
    start.ok();
    assert!(
        words(&start.stderr).contains(
            "the start-up refresh of the provider catalog carries the user name and password of its URL, so it goes without its proxy (HTTPS_PROXY at"
        ),
        "{start:?}"
    );
    assert!(!start.stderr.contains("s3cret"), "{start:?}");
    let heads = no_credential();
    assert!(heads.is_empty(), "nothing goes through it: {heads:?}");
}
