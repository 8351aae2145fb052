//! HTTPS against a loopback server with a certificate from a test CA:
//! untrusted by default, trusted through SSL_CERT_FILE, and never
//! redirected from https to http.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::Arc;

use crate::common::*;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};

struct TlsServer {
    url: String,
    ca_pem: String,
}

/// Serves `respond(path)` over TLS on loopback, with a leaf certificate for
/// 127.0.0.1 signed by a fresh CA.
fn tls_server(respond: fn(&str) -> Vec<u8>) -> TlsServer {
    tls_server_for(&["127.0.0.1", "localhost"], respond)
}

/// The same with a leaf certificate made out for `names`.
fn tls_server_for(names: &[&str], respond: fn(&str) -> Vec<u8>) -> TlsServer {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
        .unwrap()
        .signed_by(&leaf_key, &ca)
        .unwrap();
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
        )
        .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "https://127.0.0.1:{}",
        listener.local_addr().unwrap().port()
    );
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let config = config.clone();
            std::thread::spawn(move || {
                let Ok(conn) = rustls::ServerConnection::new(config) else {
                    return;
                };
                let mut tls = rustls::StreamOwned::new(conn, stream);
                let mut reader = BufReader::new(&mut tls);
                let mut request_line = String::new();
                if reader.read_line(&mut request_line).is_err() {
                    return; // the client refused the certificate
                }
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let path = request_line
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or("/")
                    .to_string();
                let _ = tls.write_all(&respond(&path));
                let _ = tls.flush();
                tls.conn.send_close_notify();
                let _ = tls.flush();
            });
        }
    });
    TlsServer {
        url,
        ca_pem: ca.pem(),
    }
}

fn ok_catalog(_path: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{CATALOG_A}",
        CATALOG_A.len()
    )
    .into_bytes()
}

/// An authority this machine does not trust: the host, why, and the one
/// fix, in the project's words. (The machine's own store is the system's;
/// a fresh test CA is in none.)
#[test]
fn an_unknown_authority_is_named_with_ssl_cert_file() {
    let server = tls_server(ok_catalog);
    let home = Home::new();
    let run = home.run(&["update-providers", &server.url]);
    run.fails_with(&[
        "the certificate of 127.0.0.1 is signed by an authority this machine does not trust (a private CA, or a proxy that inspects TLS)",
        "SSL_CERT_FILE=/path/to/ca.pem",
    ]);
    assert_plain(&run);
    assert!(home.cache().is_none());
    // --verbose adds the libraries' own account, for a bug report.
    let run = home.run(&["update-providers", &server.url, "--verbose"]);
    assert!(
        run.stderr.contains("\n  detail (for a bug report): "),
        "{run:?}"
    );
    assert!(run.stderr.contains("UnknownIssuer"), "{run:?}");
}

/// A certificate made out for another name says which names it is for.
#[test]
fn a_certificate_for_another_name_says_which() {
    let server = tls_server_for(&["catalog.mirror.corp.test"], ok_catalog);
    let home = Home::new();
    let (_dir, bundle) = temp_file("corp-ca.pem", server.ca_pem.as_bytes());
    let run = home.run_env(
        &["update-providers", &server.url],
        &[("SSL_CERT_FILE", bundle.to_str().unwrap())],
    );
    run.fails_with(&[
        "the certificate presented by 127.0.0.1 is valid only for catalog.mirror.corp.test",
        "use a host name the certificate names",
    ]);
    assert_plain(&run);
}

/// A server that accepts the connection and never speaks TLS: no answer
/// comes, and the timeout says so.
#[test]
fn a_handshake_that_never_ends_gets_no_answer() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "https://127.0.0.1:{}",
        listener.local_addr().unwrap().port()
    );
    std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().take(4).collect();
        std::thread::sleep(std::time::Duration::from_secs(30));
        drop(held);
    });
    let home = Home::new();
    let run = home.run(&["update-providers", &url, "--timeout", "0.5"]);
    run.fails_with(&["no answer came within 0.5 s", "raise the bound (--timeout"]);
    assert_plain(&run);
}

#[test]
fn ssl_cert_file_trusts_a_private_ca() {
    let server = tls_server(ok_catalog);
    let home = Home::new();
    let (_dir, bundle) = temp_file("corp-ca.pem", server.ca_pem.as_bytes());
    home.run_env(
        &["update-providers", &server.url, "--allow-shrink"],
        &[("SSL_CERT_FILE", bundle.to_str().unwrap())],
    )
    .ok();
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
}

#[test]
fn unreadable_ssl_cert_file_is_named() {
    let server = tls_server(ok_catalog);
    let home = Home::new();
    home.run_env(
        &["update-providers", &server.url],
        &[("SSL_CERT_FILE", "/no/such/bundle.pem")],
    )
    .fails_with(&["cannot read SSL_CERT_FILE /no/such/bundle.pem"]);
}

#[test]
fn https_to_http_redirect_is_refused() {
    fn downgrade(_path: &str) -> Vec<u8> {
        b"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:9/v2/providers\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec()
    }
    let server = tls_server(downgrade);
    let home = Home::new();
    let (_dir, bundle) = temp_file("corp-ca.pem", server.ca_pem.as_bytes());
    home.run_env(
        &["update-providers", &server.url],
        &[("SSL_CERT_FILE", bundle.to_str().unwrap())],
    )
    .fails_with(&[
        "redirect refused",
        "from https to http://127.0.0.1:9/v2/providers",
        "drop encryption",
    ]);
    assert!(home.cache().is_none());
}

/// A plain-http fetch starts without loading the trust store; a redirect to
/// https must then start over with TLS and succeed.
#[tokio::test(flavor = "multi_thread")]
async fn http_to_https_redirect_is_followed_with_tls() {
    let tls = tls_server(ok_catalog);
    let plain = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::path("/v2/providers"))
        .respond_with(
            wiremock::ResponseTemplate::new(301)
                .insert_header("location", format!("{}/v2/providers", tls.url)),
        )
        .mount(&plain)
        .await;
    let home = Home::new();
    let (_dir, bundle) = temp_file("corp-ca.pem", tls.ca_pem.as_bytes());
    home.run_env(
        &["update-providers", &plain.uri(), "--allow-shrink"],
        &[("SSL_CERT_FILE", bundle.to_str().unwrap())],
    )
    .ok();
    assert_eq!(home.cache().unwrap(), CATALOG_A.as_bytes());
}
