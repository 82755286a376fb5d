//! The system calls behind [`snapshot`] (Windows only). Every handle is closed by
//! [`Handle`]'s drop; every buffer handed to Windows is owned here and sized as passed.

use std::ffi::c_void;
use std::io;
use std::ptr::{null, null_mut};

use windows_sys::Win32::Foundation::{
    CloseHandle, GetLastError, ERROR_ACCESS_DENIED, ERROR_FILE_NOT_FOUND,
    ERROR_INSUFFICIENT_BUFFER, ERROR_MORE_DATA, ERROR_NO_MORE_FILES, ERROR_PATH_NOT_FOUND,
    ERROR_SHARING_VIOLATION, ERROR_SUCCESS, ERROR_WRITE_PROTECT, GENERIC_READ, GENERIC_WRITE,
    HANDLE, INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, FindFirstVolumeW, FindNextVolumeW, FindVolumeClose, GetVolumeInformationW,
    GetVolumePathNamesForVolumeNameW, FILE_SHARE_READ, FILE_SHARE_WRITE,
    IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS, OPEN_EXISTING,
};
use windows_sys::Win32::System::Ioctl::{
    PropertyStandardQuery, StorageDeviceProperty, FSCTL_DISMOUNT_VOLUME, FSCTL_LOCK_VOLUME,
    FSCTL_UNLOCK_VOLUME, IOCTL_DISK_GET_DRIVE_GEOMETRY_EX, IOCTL_DISK_GET_LENGTH_INFO,
    IOCTL_DISK_IS_WRITABLE, IOCTL_DISK_UPDATE_PROPERTIES, IOCTL_STORAGE_QUERY_PROPERTY,
    STORAGE_PROPERTY_QUERY,
};
use windows_sys::Win32::System::Registry::{RegGetValueW, HKEY_LOCAL_MACHINE, RRF_RT_REG_MULTI_SZ};
use windows_sys::Win32::System::SystemInformation::GetSystemWindowsDirectoryW;
use windows_sys::Win32::System::IO::DeviceIoControl;

use crate::{RawDisk, RawVolume, Snapshot, MAX_DISKS};

/// Largest answer accepted from one query, bytes.
const MAX_ANSWER: usize = 1 << 20;

fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(Some(0)).collect()
}

fn narrow(w: &[u16]) -> String {
    let end = w.iter().position(|&c| c == 0).unwrap_or(w.len());
    String::from_utf16_lossy(&w[..end])
}

/// The strings of a `REG_MULTI_SZ` / multi-string buffer.
fn multi(w: &[u16]) -> Vec<String> {
    w.split(|&c| c == 0)
        .take_while(|s| !s.is_empty())
        .map(String::from_utf16_lossy)
        .collect()
}

fn last_error() -> u32 {
    // SAFETY: reads the calling thread's last-error value; no arguments.
    unsafe { GetLastError() }
}

fn message(code: u32) -> String {
    io::Error::from_raw_os_error(code as i32).to_string()
}

/// An open handle, closed on drop.
struct Handle(HANDLE);

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: `self.0` came from a successful CreateFileW and is closed only here.
        unsafe { CloseHandle(self.0) };
    }
}

/// Opens `path` with no access rights (queries only), shared for reading and writing.
fn open_query(path: &str) -> Result<Handle, u32> {
    let p = wide(path);
    // SAFETY: `p` is a NUL-terminated UTF-16 string that outlives the call; no
    // security attributes, no template.
    let h = unsafe {
        CreateFileW(
            p.as_ptr(),
            0,
            FILE_SHARE_READ | FILE_SHARE_WRITE,
            null(),
            OPEN_EXISTING,
            0,
            null_mut(),
        )
    };
    if h == INVALID_HANDLE_VALUE {
        Err(last_error())
    } else {
        Ok(Handle(h))
    }
}

/// `DeviceIoControl(code, input)`, the answer's bytes; the buffer doubles while Windows
/// says it is too small, up to [`MAX_ANSWER`].
fn ioctl(h: HANDLE, code: u32, input: &[u8], mut cap: usize) -> Result<Vec<u8>, u32> {
    loop {
        let mut out = vec![0u8; cap];
        let mut got = 0u32;
        // SAFETY: `h` is an open handle the caller holds for the call; the input and
        // output pointers and lengths describe buffers owned here for the whole
        // (synchronous, no OVERLAPPED) call; `got` is a valid u32.
        let ok = unsafe {
            DeviceIoControl(
                h,
                code,
                if input.is_empty() {
                    null()
                } else {
                    input.as_ptr().cast::<c_void>()
                },
                input.len() as u32,
                out.as_mut_ptr().cast::<c_void>(),
                out.len() as u32,
                &mut got,
                null_mut(),
            )
        };
        if ok != 0 {
            out.truncate(got as usize);
            return Ok(out);
        }
        let e = last_error();
        if (e == ERROR_INSUFFICIENT_BUFFER || e == ERROR_MORE_DATA) && cap < MAX_ANSWER {
            cap = (cap * 2).max(256);
            continue;
        }
        return Err(e);
    }
}

/// The `STORAGE_DEVICE_DESCRIPTOR`: asked once small, again at the `Size` it gives.
fn descriptor(h: &Handle) -> Result<Vec<u8>, u32> {
    // STORAGE_PROPERTY_QUERY as bytes: PropertyId (i32) at 0, QueryType (i32) at 4,
    // AdditionalParameters[1] at 8, padded to the struct's size; built field by field,
    // so no padding byte is read uninitialised.
    let mut input = [0u8; size_of::<STORAGE_PROPERTY_QUERY>()];
    input[0..4].copy_from_slice(&StorageDeviceProperty.to_le_bytes());
    input[4..8].copy_from_slice(&PropertyStandardQuery.to_le_bytes());
    let input = &input[..];
    let first = ioctl(h.0, IOCTL_STORAGE_QUERY_PROPERTY, input, 1024)?;
    let size = first
        .get(4..8)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .unwrap_or(0);
    if size > first.len() && size <= MAX_ANSWER {
        ioctl(h.0, IOCTL_STORAGE_QUERY_PROPERTY, input, size)
    } else {
        Ok(first)
    }
}

fn disk(number: u32) -> Option<RawDisk> {
    let path = format!(r"\\.\PhysicalDrive{number}");
    let mut d = RawDisk {
        number,
        ..RawDisk::default()
    };
    let h = match open_query(&path) {
        Ok(h) => h,
        Err(ERROR_FILE_NOT_FOUND | ERROR_PATH_NOT_FOUND) => return None,
        Err(e) => {
            d.errors.push(format!("opening {path}: {}", message(e)));
            return Some(d);
        }
    };
    match descriptor(&h) {
        Ok(b) => d.descriptor = Some(b),
        Err(e) => d
            .errors
            .push(format!("IOCTL_STORAGE_QUERY_PROPERTY: {}", message(e))),
    }
    match ioctl(h.0, IOCTL_DISK_GET_DRIVE_GEOMETRY_EX, &[], 256) {
        Ok(b) => d.geometry = Some(b),
        Err(e) => d
            .errors
            .push(format!("IOCTL_DISK_GET_DRIVE_GEOMETRY_EX: {}", message(e))),
    }
    match ioctl(h.0, IOCTL_DISK_IS_WRITABLE, &[], 0) {
        Ok(_) => d.writable = Some(true),
        Err(ERROR_WRITE_PROTECT) => d.writable = Some(false),
        Err(e) => d
            .errors
            .push(format!("IOCTL_DISK_IS_WRITABLE: {}", message(e))),
    }
    Some(d)
}

fn volume(name: &str) -> RawVolume {
    let mut v = RawVolume {
        name: name.to_owned(),
        ..RawVolume::default()
    };
    let wname = wide(name);
    // Mount paths: a multi-string, its length asked for when the first buffer is short.
    let mut buf = vec![0u16; 1024];
    loop {
        let mut need = 0u32;
        // SAFETY: `wname` is NUL-terminated; `buf` has `buf.len()` UTF-16 units and
        // `need` is a valid u32.
        let ok = unsafe {
            GetVolumePathNamesForVolumeNameW(
                wname.as_ptr(),
                buf.as_mut_ptr(),
                buf.len() as u32,
                &mut need,
            )
        };
        if ok != 0 {
            v.paths = multi(&buf);
            break;
        }
        let e = last_error();
        if e == ERROR_MORE_DATA && (need as usize) > buf.len() && (need as usize) < MAX_ANSWER {
            buf = vec![0u16; need as usize];
            continue;
        }
        v.errors
            .push(format!("GetVolumePathNamesForVolumeNameW: {}", message(e)));
        break;
    }
    let mut fs = [0u16; 64];
    // SAFETY: `wname` is NUL-terminated and ends in a backslash as the call requires;
    // `fs` has 64 units; the other outputs are not asked for (null, size 0).
    let ok = unsafe {
        GetVolumeInformationW(
            wname.as_ptr(),
            null_mut(),
            0,
            null_mut(),
            null_mut(),
            null_mut(),
            fs.as_mut_ptr(),
            fs.len() as u32,
        )
    };
    if ok != 0 {
        v.filesystem = Some(narrow(&fs));
    }
    // The volume itself is opened without its trailing backslash.
    match open_query(name.trim_end_matches('\\')) {
        Ok(h) => match ioctl(h.0, IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS, &[], 256) {
            Ok(b) => v.extents = Some(b),
            Err(e) => v.errors.push(format!(
                "IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS: {}",
                message(e)
            )),
        },
        Err(e) => v.errors.push(format!("opening the volume: {}", message(e))),
    }
    v
}

/// Every volume, and whether the list is whole.
fn volumes(errors: &mut Vec<String>) -> (Vec<RawVolume>, bool) {
    let mut out = Vec::new();
    let mut name = [0u16; 260];
    // SAFETY: `name` has 260 UTF-16 units, as passed.
    let find = unsafe { FindFirstVolumeW(name.as_mut_ptr(), name.len() as u32) };
    if find == INVALID_HANDLE_VALUE {
        errors.push(format!("FindFirstVolumeW: {}", message(last_error())));
        return (out, false);
    }
    let complete = loop {
        out.push(volume(&narrow(&name)));
        // SAFETY: `find` is the open search handle; `name` as above.
        let ok = unsafe { FindNextVolumeW(find, name.as_mut_ptr(), name.len() as u32) };
        if ok == 0 {
            let e = last_error();
            if e != ERROR_NO_MORE_FILES {
                errors.push(format!("FindNextVolumeW: {}", message(e)));
            }
            break e == ERROR_NO_MORE_FILES;
        }
    };
    // SAFETY: `find` came from FindFirstVolumeW and is closed once.
    unsafe { FindVolumeClose(find) };
    (out, complete)
}

fn windows_dir() -> Option<String> {
    let mut buf = [0u16; 260];
    // SAFETY: `buf` has 260 UTF-16 units, as passed.
    let n = unsafe { GetSystemWindowsDirectoryW(buf.as_mut_ptr(), buf.len() as u32) } as usize;
    (n > 0 && n < buf.len()).then(|| narrow(&buf[..n]))
}

/// `ExistingPageFiles` (`\??\C:\pagefile.sys`), the `\??\` prefix dropped; no value:
/// none in use; `None`: the value could not be read.
fn page_files(errors: &mut Vec<String>) -> Option<Vec<String>> {
    let key = wide(r"SYSTEM\CurrentControlSet\Control\Session Manager\Memory Management");
    let value = wide("ExistingPageFiles");
    let mut buf = vec![0u16; 2048];
    let mut bytes = (buf.len() * 2) as u32;
    // SAFETY: `key` and `value` are NUL-terminated; `buf` holds `bytes` bytes; the type
    // is not asked for.
    let e = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            key.as_ptr(),
            value.as_ptr(),
            RRF_RT_REG_MULTI_SZ,
            null_mut(),
            buf.as_mut_ptr().cast::<c_void>(),
            &mut bytes,
        )
    };
    if e == ERROR_FILE_NOT_FOUND {
        // No page file at all is a valid machine.
        return Some(Vec::new());
    }
    if e != ERROR_SUCCESS {
        errors.push(format!("reading ExistingPageFiles: {}", message(e)));
        return None;
    }
    buf.truncate(bytes as usize / 2);
    Some(
        multi(&buf)
            .into_iter()
            .map(|p| p.strip_prefix(r"\??\").map(str::to_owned).unwrap_or(p))
            .collect(),
    )
}

/// Asks Windows everything the module doc lists. Never fails as a whole: what could
/// not be asked is in the `errors` of the disk, the volume or the snapshot.
pub fn snapshot() -> Snapshot {
    let mut errors = Vec::new();
    let disks = (0..MAX_DISKS).filter_map(disk).collect();
    let (volumes, volumes_complete) = volumes(&mut errors);
    let page_files = page_files(&mut errors);
    Snapshot {
        disks,
        volumes,
        windows_dir: windows_dir(),
        page_files,
        errors,
        volumes_complete,
    }
}

/// A volume opened for reading and writing, locked (`FSCTL_LOCK_VOLUME`) and
/// dismounted (`FSCTL_DISMOUNT_VOLUME`): nothing else can open files on it or write its
/// sectors, and the writes of the disk under it are allowed ("Disk Devices",
/// Microsoft Learn: writes to a disk's sectors inside a mounted volume fail unless the
/// volume is locked or dismounted). Unlocked (`FSCTL_UNLOCK_VOLUME`) and closed on drop;
/// Windows mounts what is on the disk then afresh.
pub struct VolumeLock {
    handle: Handle,
    name: String,
}

impl VolumeLock {
    /// The volume, as given to [`lock_volume`].
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for VolumeLock {
    fn drop(&mut self) {
        let _ = ioctl(self.handle.0, FSCTL_UNLOCK_VOLUME, &[], 0);
    }
}

/// Tries of `FSCTL_LOCK_VOLUME` while a file on the volume is open elsewhere (Explorer,
/// an antivirus scan: `ERROR_ACCESS_DENIED` or `ERROR_SHARING_VIOLATION`),
/// [`LOCK_WAIT_MS`] apart: 15 s, as Rufus waits (`src/drive.c`, `GetHandle`).
pub const LOCK_TRIES: u32 = 60;
/// Milliseconds between tries of the lock.
pub const LOCK_WAIT_MS: u64 = 250;

/// Locks and dismounts the volume `name` (`\\?\Volume{GUID}\` or `E:`; a trailing
/// backslash is dropped: that would open the root folder, not the volume).
///
/// # Errors
/// The open's (`ERROR_ACCESS_DENIED`, 5, without an elevated prompt), the lock's (after
/// [`LOCK_TRIES`] tries while files are open on it; at once for any other error), the
/// dismount's.
pub fn lock_volume(name: &str) -> io::Result<VolumeLock> {
    let bare = name.trim_end_matches('\\');
    let path = if bare.len() == 2 && bare.ends_with(':') {
        format!(r"\\.\{bare}")
    } else {
        bare.to_owned()
    };
    let p = wide(&path);
    // SAFETY: `p` is a NUL-terminated UTF-16 string that outlives the call; no
    // security attributes, no template.
    let h = unsafe {
        CreateFileW(
            p.as_ptr(),
            GENERIC_READ | GENERIC_WRITE,
            FILE_SHARE_READ | FILE_SHARE_WRITE,
            null(),
            OPEN_EXISTING,
            0,
            null_mut(),
        )
    };
    if h == INVALID_HANDLE_VALUE {
        return Err(io::Error::from_raw_os_error(last_error() as i32));
    }
    let handle = Handle(h);
    let mut tries = 0;
    loop {
        match ioctl(handle.0, FSCTL_LOCK_VOLUME, &[], 0) {
            Ok(_) => break,
            Err(ERROR_ACCESS_DENIED | ERROR_SHARING_VIOLATION) if tries + 1 < LOCK_TRIES => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(LOCK_WAIT_MS));
            }
            Err(e) => return Err(io::Error::from_raw_os_error(e as i32)),
        }
    }
    let lock = VolumeLock {
        handle,
        name: name.to_owned(),
    };
    ioctl(lock.handle.0, FSCTL_DISMOUNT_VOLUME, &[], 0)
        .map_err(|e| io::Error::from_raw_os_error(e as i32))?;
    Ok(lock)
}

/// `IOCTL_DISK_UPDATE_PROPERTIES` on an open disk: Windows reads its partition table
/// again (after a new image is written), and mounts the new volumes.
///
/// # Errors
/// The ioctl's.
pub fn update_properties(disk: &std::fs::File) -> io::Result<()> {
    use std::os::windows::io::AsRawHandle;
    ioctl(disk.as_raw_handle(), IOCTL_DISK_UPDATE_PROPERTIES, &[], 0)
        .map(drop)
        .map_err(|e| io::Error::from_raw_os_error(e as i32))
}

/// The length in bytes of an open disk (`IOCTL_DISK_GET_LENGTH_INFO`: a seek to the end
/// of a raw disk's handle does not give it).
///
/// # Errors
/// The ioctl's (wine 8.0 does not support it: `ERROR_NOT_SUPPORTED`, 50), or an answer
/// shorter than its 8 bytes.
pub fn disk_length(disk: &std::fs::File) -> io::Result<u64> {
    use std::os::windows::io::AsRawHandle;
    let b = ioctl(disk.as_raw_handle(), IOCTL_DISK_GET_LENGTH_INFO, &[], 8)
        .map_err(|e| io::Error::from_raw_os_error(e as i32))?;
    let b: [u8; 8] = b
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| io::Error::other("IOCTL_DISK_GET_LENGTH_INFO: a short answer"))?;
    Ok(u64::from_le_bytes(b))
}
