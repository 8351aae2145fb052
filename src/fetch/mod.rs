//! Reading a SOURCE: what it means ([`source`]), bounded downloads with
//! their redirects followed by hand ([`http`]) over TLS set up once
//! ([`tls`]), told of and ended by their caller ([`watch`]: a progress
//! reporter, a cancellation), why a download failed in plain words
//! ([`diagnosis`]), the proxy each request goes through ([`proxy`]), and
//! what a project's `.env` may not choose of a request that carries a
//! credential ([`credential`]).

pub(crate) mod credential;
pub(crate) mod diagnosis;
pub(crate) mod http;
pub(crate) mod proxy;
pub(crate) mod source;
pub(crate) mod tls;
pub(crate) mod watch;
