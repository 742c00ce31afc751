//! TUN devices (Linux `drivers/net/tun.c`, `Documentation/networking/tuntap.rst`): a
//! layer-3 interface whose packets the owning process reads and writes as raw IP
//! datagrams on a file descriptor. Opened with `IFF_TUN | IFF_NO_PI` (no 4-byte packet
//! information header) and non-blocking; the device disappears when the descriptor is
//! closed (it is not made persistent), so a crash leaves no interface behind.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// `struct ifreq` as `TUNSETIFF` reads it: the name and the flags (the rest of the
/// 40-byte union is unused here).
#[repr(C)]
struct IfReqFlags {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// An open TUN device.
pub struct Tun {
    fd: OwnedFd,
    name: String,
}

impl Tun {
    /// Create TUN device `name` (at most 15 bytes) in the calling process's namespace.
    pub fn open(name: &str) -> io::Result<Tun> {
        if name.is_empty() || name.len() >= libc::IFNAMSIZ {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("TUN name {name:?}: 1 to 15 bytes"),
            ));
        }
        // SAFETY: a NUL-terminated path; the result is checked.
        let raw = unsafe {
            libc::open(
                c"/dev/net/tun".as_ptr(),
                libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a descriptor we just opened and own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut req = IfReqFlags {
            name: [0; libc::IFNAMSIZ],
            flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
            _pad: [0; 22],
        };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        // SAFETY: TUNSETIFF reads a `struct ifreq`, which `IfReqFlags` lays out.
        let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF, &mut req) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Tun {
            fd,
            name: name.to_owned(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Read one packet into `buf`; `None` when none is waiting.
    pub fn read(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: `buf` is valid for `buf.len()` bytes.
        let n = unsafe { libc::read(self.raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(err),
        }
    }

    /// Write one packet. A full device queue drops it, as a full NIC ring would.
    pub fn write(&self, packet: &[u8]) -> io::Result<bool> {
        // SAFETY: `packet` is valid for `packet.len()` bytes.
        let n = unsafe { libc::write(self.raw_fd(), packet.as_ptr().cast(), packet.len()) };
        if n >= 0 {
            return Ok(true);
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(false),
            // The interface is down or its namespace is going away: the packet is lost.
            _ if err.raw_os_error() == Some(libc::EIO) => Ok(false),
            _ => Err(err),
        }
    }
}
