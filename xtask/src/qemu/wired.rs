//! The QEMU plan's wired tests outside the guest (board file `qemu.wired`): the peer on
//! this machine for `usb-net-lan`, the hub NICs for `virtio-pair`.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result};
use benchboot_board::{Qemu, QemuWired};

use super::{build_host_tool, free_port, Guard};

/// What the QEMU plan's wired tests need outside the guest (board file `qemu.wired`).
#[derive(Default)]
pub(super) struct WiredStandIns {
    /// `usb-net-lan`: `benchboot peer` on 127.0.0.1, killed with QEMU.
    pub(super) peer: Option<Guard>,
    /// More `-netdev user` options: the guest forward to the peer, the host forward to
    /// the board's HTTP server.
    pub(super) user_net: String,
    /// More arguments before the results NIC: the `virtio-pair` NICs.
    pub(super) nics: Vec<String>,
}

/// Starts what `q.wired` needs: for `usb-net-lan` the peer on this machine's loopback
/// (each guest connection to 10.0.2.100:5202 runs `benchboot relay` to it; the board's
/// HTTP server is forwarded from a free 127.0.0.1 port, which the peer is told); for
/// `virtio-pair` two cables, each two NICs on a QEMU hub of its own. Nothing leaves
/// this machine: slirp stays `restrict=on`, hubs have no host side.
pub(super) fn wired_stand_ins(q: &Qemu, work: &Path) -> Result<WiredStandIns> {
    use benchboot_image::plans::{QEMU_BOARD_HTTP_PORT, QEMU_PEER_ADDR, QEMU_WIRED_MACS};
    let mut out = WiredStandIns::default();
    match q.wired {
        QemuWired::None => {}
        QemuWired::UsbNetLan => {
            let bin = build_host_tool(false)?;
            let peer_port = free_port()?;
            let http_port = free_port()?;
            let log = std::fs::File::create(work.join("peer.log"))?;
            let child = Command::new(&bin)
                .arg("peer")
                .arg("--listen")
                .arg(format!("127.0.0.1:{peer_port}"))
                .arg("--board-address")
                .arg(format!("127.0.0.1:{http_port}"))
                .stdin(Stdio::null())
                .stdout(log.try_clone()?)
                .stderr(log)
                .spawn()
                .with_context(|| format!("starting {} peer", bin.display()))?;
            out.peer = Some(Guard(child));
            let [a, b, c, d] = QEMU_PEER_ADDR;
            let tests_port = benchboot_plan::NetTests::hardware().peer_port;
            out.user_net = format!(
                ",guestfwd=tcp:{a}.{b}.{c}.{d}:{tests_port}-cmd:{} relay 127.0.0.1:{peer_port},hostfwd=tcp:127.0.0.1:{http_port}-:{QEMU_BOARD_HTTP_PORT}",
                bin.display()
            );
            eprintln!(
                "qemu: peer on 127.0.0.1:{peer_port} (log {}), the guest reaches it at {a}.{b}.{c}.{d}:{tests_port}",
                work.join("peer.log").display()
            );
        }
        QemuWired::VirtioPair => {
            for (cable, macs) in QEMU_WIRED_MACS.iter().enumerate() {
                for (end, mac) in macs.iter().enumerate() {
                    out.nics.extend([
                        "-netdev".into(),
                        format!("hubport,id=w{cable}{end},hubid={}", cable + 1),
                        "-device".into(),
                        format!("virtio-net-device,netdev=w{cable}{end},mac={mac}"),
                    ]);
                }
            }
        }
    }
    Ok(out)
}
