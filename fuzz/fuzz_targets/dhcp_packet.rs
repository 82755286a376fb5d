//! The DHCP packet decoder (`crates/dhcp` codec) and the server fed whatever decodes.
#![no_main]

use std::net::Ipv4Addr;

use benchboot_dhcp::{reply_destination, Message, Server};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(msg) = Message::parse(data) else {
        return;
    };
    // What decodes, encodes; and that encoding decodes to the same message.
    let bytes = msg.encode();
    let again = Message::parse(&bytes).expect("an encoded message parses");
    assert_eq!(again, msg);
    // The board's server on the first gadget link, as firmware/src/network.rs runs it.
    let mut server = Server::new(
        Ipv4Addr::new(10, 55, 0, 1),
        Ipv4Addr::new(10, 55, 0, 2),
        Ipv4Addr::new(255, 255, 255, 252),
        3600,
    );
    if let Some(reply) = server.handle(&msg, 1) {
        let _ = reply_destination(&msg, &reply);
        let encoded = reply.encode();
        let back = Message::parse(&encoded).expect("a reply parses");
        assert_eq!(back, reply);
        // Never a router or DNS option: the link must not become a default route.
        assert!(back.options.get_other(3).is_none() && back.options.get_other(6).is_none());
    }
});
