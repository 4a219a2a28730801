//! Which IP addresses are public: the rule behind
//! [`Destinations::PublicOnly`](crate::Destinations::PublicOnly).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is not a public internet address, so that a download
/// for someone else (a tenant of a service) must not go there.
///
/// [`NonPublic::of`] classifies an address; its `Display` reads "a loopback
/// address", "a link-local address (cloud metadata services live there)", ...
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NonPublic {
    /// `0.0.0.0/8`, `::`: "this host" / "this network".
    Unspecified,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`.
    Private,
    /// `100.64.0.0/10`, carrier-grade NAT.
    SharedNat,
    /// `169.254.0.0/16` (where cloud metadata services answer), `fe80::/10`.
    LinkLocal,
    /// `fc00::/7` (e.g. AWS's `fd00:ec2::254`), and the deprecated site-local `fec0::/10`.
    UniqueLocal,
    /// `192.0.2.0/24`, `198.51.100.0/24`, `203.0.113.0/24`, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// `198.18.0.0/15`, `2001:2::/48`.
    Benchmarking,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// Everything else set aside: `192.0.0.0/24`, `192.88.99.0/24`, `240.0.0.0/4`,
    /// IPv6 outside `2000::/3`, Teredo and the rest of `2001::/23`.
    Reserved,
}

impl std::fmt::Display for NonPublic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Unspecified => "an unspecified (\"this network\") address",
            Self::Loopback => "a loopback address",
            Self::Private => "a private network address",
            Self::SharedNat => "a carrier-grade NAT address",
            Self::LinkLocal => "a link-local address (cloud metadata services live there)",
            Self::UniqueLocal => "a unique local (private IPv6) address",
            Self::Documentation => "a documentation address",
            Self::Benchmarking => "a benchmarking address",
            Self::Multicast => "a multicast address",
            Self::Broadcast => "the broadcast address",
            Self::Reserved => "a reserved address",
        })
    }
}

/// IPv4 blocks that are not public: network, prefix length, class. Order
/// matters only where blocks nest (none do).
const V4: &[(u32, u32, NonPublic)] = &[
    (0x0000_0000, 8, NonPublic::Unspecified),    // 0.0.0.0/8
    (0x0a00_0000, 8, NonPublic::Private),        // 10.0.0.0/8
    (0x6440_0000, 10, NonPublic::SharedNat),     // 100.64.0.0/10
    (0x7f00_0000, 8, NonPublic::Loopback),       // 127.0.0.0/8
    (0xa9fe_0000, 16, NonPublic::LinkLocal),     // 169.254.0.0/16
    (0xac10_0000, 12, NonPublic::Private),       // 172.16.0.0/12
    (0xc000_0000, 24, NonPublic::Reserved),      // 192.0.0.0/24
    (0xc000_0200, 24, NonPublic::Documentation), // 192.0.2.0/24
    (0xc058_6300, 24, NonPublic::Reserved),      // 192.88.99.0/24
    (0xc0a8_0000, 16, NonPublic::Private),       // 192.168.0.0/16
    (0xc612_0000, 15, NonPublic::Benchmarking),  // 198.18.0.0/15
    (0xc633_6400, 24, NonPublic::Documentation), // 198.51.100.0/24
    (0xcb00_7100, 24, NonPublic::Documentation), // 203.0.113.0/24
    (0xe000_0000, 4, NonPublic::Multicast),      // 224.0.0.0/4
    (0xffff_ffff, 32, NonPublic::Broadcast),     // 255.255.255.255/32
    (0xf000_0000, 4, NonPublic::Reserved),       // 240.0.0.0/4
];

/// IPv6 blocks inside `2000::/3` that are not public (everything outside
/// it is handled separately).
const V6_GLOBAL: &[(u128, u32, NonPublic)] = &[
    (0x2001_0db8 << 96, 32, NonPublic::Documentation), // 2001:db8::/32
    (0x2001_0002 << 96, 48, NonPublic::Benchmarking),  // 2001:2::/48
    (0x2001_0000 << 96, 23, NonPublic::Reserved),      // 2001::/23, incl. Teredo
    (0x3fff << 112, 20, NonPublic::Documentation),     // 3fff::/20
];

impl NonPublic {
    /// Why `ip` is not public, or `None` for a public address.
    ///
    /// IPv6 addresses that carry an IPv4 address a gateway would connect
    /// to (IPv4-mapped `::ffff:0:0/96`, NAT64 `64:ff9b::/96`, 6to4
    /// `2002::/16`) are judged by that IPv4 address.
    ///
    /// ```
    /// use std::net::IpAddr;
    /// use oxiscope_http::NonPublic;
    ///
    /// let ip = |s: &str| s.parse::<IpAddr>().unwrap();
    /// assert_eq!(NonPublic::of(ip("169.254.169.254")), Some(NonPublic::LinkLocal));
    /// assert_eq!(NonPublic::of(ip("::ffff:127.0.0.1")), Some(NonPublic::Loopback));
    /// assert_eq!(NonPublic::of(ip("93.184.215.14")), None);
    /// ```
    #[must_use]
    pub fn of(ip: IpAddr) -> Option<Self> {
        match ip {
            IpAddr::V4(v4) => of_v4(v4),
            IpAddr::V6(v6) => of_v6(v6),
        }
    }
}

fn in_block<T>(addr: T, net: T, len: u32, bits: u32) -> bool
where
    T: Copy + PartialEq + std::ops::Shr<u32, Output = T>,
{
    // `len` is never 0 in the tables, so the shift stays below `bits`.
    addr >> (bits - len) == net >> (bits - len)
}

fn of_v4(ip: Ipv4Addr) -> Option<NonPublic> {
    let addr = u32::from(ip);
    V4.iter()
        .find(|(net, len, _)| in_block(addr, *net, *len, 32))
        .map(|(_, _, class)| *class)
}

fn of_v6(ip: Ipv6Addr) -> Option<NonPublic> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return of_v4(v4);
    }
    let addr = u128::from(ip);
    if in_block(addr, 0x0064_ff9b << 96, 96, 128) {
        return of_v4(Ipv4Addr::from((addr & 0xffff_ffff) as u32)); // NAT64
    }
    if in_block(addr, 0x2002 << 112, 16, 128) {
        return of_v4(Ipv4Addr::from(((addr >> 80) & 0xffff_ffff) as u32)); // 6to4
    }
    if ip.is_unspecified() {
        return Some(NonPublic::Unspecified);
    }
    if ip.is_loopback() {
        return Some(NonPublic::Loopback);
    }
    if !in_block(addr, 0x2 << 124, 3, 128) {
        let class = if in_block(addr, 0xfe80 << 112, 10, 128) {
            NonPublic::LinkLocal
        } else if in_block(addr, 0xfc00 << 112, 7, 128) || in_block(addr, 0xfec0 << 112, 10, 128) {
            NonPublic::UniqueLocal
        } else if in_block(addr, 0xff00 << 112, 8, 128) {
            NonPublic::Multicast
        } else {
            NonPublic::Reserved
        };
        return Some(class);
    }
    V6_GLOBAL
        .iter()
        .find(|(net, len, _)| in_block(addr, *net, *len, 128))
        .map(|(_, _, class)| *class)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn class(s: &str) -> Option<NonPublic> {
        NonPublic::of(s.parse().unwrap())
    }

    #[test]
    fn every_special_ipv4_block_is_classified_at_its_edges() {
        use NonPublic::*;
        let cases = [
            ("0.0.0.0", Some(Unspecified)),
            ("0.255.255.255", Some(Unspecified)),
            ("1.0.0.0", None),
            ("9.255.255.255", None),
            ("10.0.0.1", Some(Private)),
            ("10.255.255.255", Some(Private)),
            ("11.0.0.0", None),
            ("100.63.255.255", None),
            ("100.64.0.0", Some(SharedNat)),
            ("100.127.255.255", Some(SharedNat)),
            ("100.128.0.0", None),
            ("127.0.0.1", Some(Loopback)),
            ("127.255.0.9", Some(Loopback)),
            ("169.254.169.254", Some(LinkLocal)),
            ("169.253.255.255", None),
            ("172.15.255.255", None),
            ("172.16.0.0", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("172.32.0.0", None),
            ("192.0.0.170", Some(Reserved)),
            ("192.0.2.7", Some(Documentation)),
            ("192.88.99.1", Some(Reserved)),
            ("192.168.1.1", Some(Private)),
            ("192.169.0.0", None),
            ("198.17.255.255", None),
            ("198.18.0.0", Some(Benchmarking)),
            ("198.19.255.255", Some(Benchmarking)),
            ("198.20.0.0", None),
            ("198.51.100.1", Some(Documentation)),
            ("203.0.113.1", Some(Documentation)),
            ("8.8.8.8", None),
            ("93.184.215.14", None),
            ("223.255.255.255", None),
            ("224.0.0.1", Some(Multicast)),
            ("239.255.255.255", Some(Multicast)),
            ("240.0.0.1", Some(Reserved)),
            ("255.255.255.254", Some(Reserved)),
            ("255.255.255.255", Some(Broadcast)),
        ];
        let got: Vec<_> = cases.iter().map(|(ip, _)| (*ip, class(ip))).collect();
        assert_eq!(got, cases.to_vec());
    }

    #[test]
    fn every_special_ipv6_block_is_classified() {
        use NonPublic::*;
        let cases = [
            ("::", Some(Unspecified)),
            ("::1", Some(Loopback)),
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:169.254.169.254", Some(LinkLocal)),
            ("::ffff:10.1.2.3", Some(Private)),
            ("::ffff:8.8.8.8", None),
            ("::127.0.0.1", Some(Reserved)),
            ("64:ff9b::a9fe:a9fe", Some(LinkLocal)),
            ("64:ff9b::808:808", None),
            ("2002:7f00:1::", Some(Loopback)),
            ("2002:0808:0808::1", None),
            ("fe80::1", Some(LinkLocal)),
            ("febf::1", Some(LinkLocal)),
            ("fec0::1", Some(UniqueLocal)),
            ("fc00::1", Some(UniqueLocal)),
            ("fd00:ec2::254", Some(UniqueLocal)),
            ("ff02::1", Some(Multicast)),
            ("100::1", Some(Reserved)),
            ("2001::1", Some(Reserved)),
            ("2001:db8::1", Some(Documentation)),
            ("2001:2::1", Some(Benchmarking)),
            ("3fff::1", Some(Documentation)),
            ("2606:4700:4700::1111", None),
            ("2a00:1450:4001:80b::200e", None),
            ("4000::1", Some(Reserved)),
        ];
        let got: Vec<_> = cases.iter().map(|(ip, _)| (*ip, class(ip))).collect();
        assert_eq!(got, cases.to_vec());
    }

    #[test]
    fn messages_name_the_class() {
        assert_eq!(NonPublic::Loopback.to_string(), "a loopback address");
        assert!(NonPublic::LinkLocal.to_string().contains("metadata"));
    }
}
