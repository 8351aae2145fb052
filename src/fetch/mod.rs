//! Reading a SOURCE: what it means ([`source`]), bounded downloads
//! ([`http`]) over TLS set up once ([`tls`]), why a download failed in plain
//! words ([`diagnosis`]), the proxy each request goes through
//! ([`proxy`]), and the HTTP validators sent back to a server
//! ([`validators`]).

pub mod diagnosis;
pub mod http;
pub mod proxy;
pub mod source;
pub mod tls;
pub mod validators;
