//! Reading a SOURCE: what it means ([`source`]), bounded downloads
//! ([`http`]) over TLS set up once ([`tls`]), why a download failed in plain
//! words ([`diagnosis`]), and the proxy each request goes through
//! ([`proxy`]).

pub mod diagnosis;
pub mod http;
pub mod proxy;
pub mod source;
pub mod tls;
