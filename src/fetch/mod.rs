//! Reading a SOURCE: what it means ([`source`]), bounded downloads
//! ([`http`]) over TLS set up once ([`tls`]), why a download failed in plain
//! words ([`diagnosis`]), the proxy each request goes through
//! ([`proxy`]), the HTTP validators sent back to a server
//! ([`validators`]), and the local files this program finds by itself,
//! read as a careful tool reads them ([`file`]).

pub mod diagnosis;
pub mod file;
pub mod http;
pub mod proxy;
pub mod source;
pub mod tls;
pub mod validators;
