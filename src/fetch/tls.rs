//! TLS for downloads: rustls with ring's cryptography, and the operating
//! system's trust store (rustls-platform-verifier) plus `SSL_CERT_FILE`'s
//! certificates, loaded when a first certificate is to be verified.
//!
//! ring, not aws-lc: aws-lc seeds its random generator with CPU jitter
//! entropy once per process, 40 to 70 ms of CPU before the first TLS
//! handshake of every process that makes one (the update, the helper that
//! refreshes at start-up); ring takes its randomness from the operating
//! system. The measurements are in docs/BENCHMARKS.md. The configuration is
//! handed to the HTTP client whole, so that a program using this library
//! keeps whatever process-wide provider it installed.
//!
//! Loading the trust store costs more than a whole exchange on loopback:
//! a plain-http fetch never needs it, so it is loaded on first use.

use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

/// The client configuration: TLS 1.2 and 1.3 with ring, HTTP/1.1 (one
/// connection kept alive carries a catalog and its signature).
pub(crate) fn config(extra_roots: Vec<CertificateDer<'static>>) -> rustls::ClientConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(LazyVerifier {
        provider: Arc::clone(&provider),
        extra_roots,
        verifier: OnceLock::new(),
    });
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config
}

/// The platform's verifier, built when it is first asked to verify.
#[derive(Debug)]
struct LazyVerifier {
    provider: Arc<CryptoProvider>,
    extra_roots: Vec<CertificateDer<'static>>,
    verifier: OnceLock<Result<rustls_platform_verifier::Verifier, rustls::Error>>,
}

impl LazyVerifier {
    fn get(&self) -> Result<&rustls_platform_verifier::Verifier, rustls::Error> {
        self.verifier
            .get_or_init(|| {
                rustls_platform_verifier::Verifier::new_with_extra_roots(
                    self.extra_roots.iter().cloned(),
                    Arc::clone(&self.provider),
                )
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl ServerCertVerifier for LazyVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.get()?
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.get()?.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.get()?.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        // What the provider can verify, known without the trust store.
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
