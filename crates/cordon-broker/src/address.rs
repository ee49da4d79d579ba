//! Which addresses a request may reach through a name, and the resolver that finds them.
//!
//! A name that resolves to this machine or to a private network (loopback, RFC 1918, link-local,
//! carrier-grade NAT, unique local IPv6, and every other range not routed on the internet) is
//! refused: that is how a page or a plan would reach the services behind the user's firewall
//! (the cloud metadata service at 169.254.169.254, a router, a database on localhost). An
//! address written as such in the URL is taken as written: the policy's allow-list, which the
//! caller checked before asking, named it.
//!
//! A name is resolved once per request, and the connection goes to the addresses that were
//! checked, never to a second answer (DNS rebinding).

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

/// Finds the addresses of a name.
pub trait Resolve: Send + Sync {
    fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>>;
}

/// The system's resolver (`getaddrinfo`).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        (host, port).to_socket_addrs().map(Iterator::collect)
    }
}

/// Whether `ip` is an address on the internet, not this machine, a private network, or a range
/// reserved for anything else.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let reserved = a == 0                                  // "this network"
        || a == 10                                         // private
        || a == 127                                        // loopback
        || (a == 100 && (64..128).contains(&b))            // carrier-grade NAT
        || (a == 169 && b == 254)                          // link-local (cloud metadata)
        || (a == 172 && (16..32).contains(&b))             // private
        || (a == 192 && b == 0 && c == 0)                  // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2)                  // documentation
        || (a == 192 && b == 88 && c == 99)                // 6to4 relay anycast
        || (a == 192 && b == 168)                          // private
        || (a == 198 && (18..20).contains(&b))             // benchmarking
        || (a == 198 && b == 51 && c == 100)               // documentation
        || (a == 203 && b == 0 && c == 113)                // documentation
        || a >= 224; // multicast, reserved, broadcast
    !reserved
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return is_public_v4(v4);
    }
    let s = ip.segments();
    let reserved = ip.is_unspecified()
        || ip.is_loopback()
        || (s[0] & 0xfe00) == 0xfc00                        // unique local
        || (s[0] & 0xffc0) == 0xfe80                        // link-local
        || (s[0] & 0xffc0) == 0xfec0                        // site-local (deprecated)
        || (s[0] & 0xff00) == 0xff00                        // multicast
        || (s[0] == 0x2001 && s[1] == 0x0db8)               // documentation
        || (s[0] == 0x2001 && s[1] < 0x0200)                // IETF protocol assignments, Teredo
        || s[0] == 0x2002                                   // 6to4: an IPv4 address inside
        || (s[0] & 0xe000) != 0x2000; // outside global unicast (2000::/3)
    !reserved
}

/// The IPv4 address an IPv6 address stands for: IPv4-mapped (`::ffff:a.b.c.d`),
/// IPv4-compatible (`::a.b.c.d`) or NAT64 (`64:ff9b::a.b.c.d`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    let mapped = s[..5] == [0; 5] && s[5] == 0xffff;
    let compatible = s[..6] == [0; 6] && !ip.is_loopback() && !ip.is_unspecified();
    let nat64 = s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0; 4];
    (mapped || compatible || nat64).then_some(low)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a test may fail loudly
    use super::*;

    #[test]
    fn the_internet_is_public_and_nothing_else_is() {
        for public in ["1.1.1.1", "8.8.8.8", "93.184.216.34", "2606:4700::1111", "2a00:1450:4001::200e"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
        for private in [
            "127.0.0.1",
            "127.1.2.3",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "198.18.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
    }
}
