//! macOS: `diskutil list -plist` / `diskutil info -plist` parsed into devices and
//! judged by the same rules, on output captured from a real Mac (an Intel MacBook with
//! an APFS system disk and a SanDisk Cruzer Fit USB stick). The captures come from
//! henrikstengaard/hst-imager,
//! `src/Hst.Imager.Core.Tests/TestData/diskutil/{diskutil-all-usb-stick,
//! diskutil-info-disk0,diskutil-info-disk2-usb-stick}.plist`; the list is verbatim,
//! the info documents are trimmed of keys benchboot does not read (SMART counters,
//! permissions).

use std::path::PathBuf;

use benchboot::devices::macos;
use benchboot::devices::{Limits, Refusal, Transport};

const LIST: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>AllDisks</key>
	<array>
		<string>disk0</string>
		<string>disk0s1</string>
		<string>disk0s2</string>
		<string>disk1</string>
		<string>disk1s1</string>
		<string>disk1s2</string>
		<string>disk1s3</string>
		<string>disk1s4</string>
		<string>disk1s5</string>
		<string>disk1s5s1</string>
		<string>disk1s6</string>
		<string>disk2</string>
	</array>
	<key>AllDisksAndPartitions</key>
	<array>
		<dict>
			<key>Content</key>
			<string>GUID_partition_scheme</string>
			<key>DeviceIdentifier</key>
			<string>disk0</string>
			<key>OSInternal</key>
			<false/>
			<key>Partitions</key>
			<array>
				<dict>
					<key>Content</key>
					<string>EFI</string>
					<key>DeviceIdentifier</key>
					<string>disk0s1</string>
					<key>DiskUUID</key>
					<string>62C7B982-3A3B-4A64-82E9-3674F6A6F39B</string>
					<key>Size</key>
					<integer>209715200</integer>
					<key>VolumeName</key>
					<string>EFI</string>
					<key>VolumeUUID</key>
					<string>0E239BC6-F960-3107-89CF-1C97F78BB46B</string>
				</dict>
				<dict>
					<key>Content</key>
					<string>Apple_APFS</string>
					<key>DeviceIdentifier</key>
					<string>disk0s2</string>
					<key>DiskUUID</key>
					<string>ED2C035E-F015-40CA-B514-01D8FA64A0F7</string>
					<key>Size</key>
					<integer>511900434432</integer>
				</dict>
			</array>
			<key>Size</key>
			<integer>512110190592</integer>
		</dict>
		<dict>
			<key>APFSPhysicalStores</key>
			<array>
				<dict>
					<key>DeviceIdentifier</key>
					<string>disk0s2</string>
				</dict>
			</array>
			<key>APFSVolumes</key>
			<array>
				<dict>
					<key>DeviceIdentifier</key>
					<string>disk1s1</string>
					<key>DiskUUID</key>
					<string>517F6CD4-A167-4190-9A8B-633E1EB24645</string>
					<key>MountPoint</key>
					<string>/System/Volumes/Data</string>
					<key>MountedSnapshots</key>
					<array/>
					<key>OSInternal</key>
					<false/>
					<key>Size</key>
					<integer>511900434432</integer>
					<key>VolumeName</key>
					<string>macOS – data</string>
					<key>VolumeUUID</key>
					<string>517F6CD4-A167-4190-9A8B-633E1EB24645</string>
				</dict>
				<dict>
					<key>DeviceIdentifier</key>
					<string>disk1s2</string>
					<key>DiskUUID</key>
					<string>BF244BFF-8FE3-40D5-9BE1-9867EDE87FA6</string>
					<key>MountPoint</key>
					<string>/System/Volumes/Preboot</string>
					<key>MountedSnapshots</key>
					<array/>
					<key>OSInternal</key>
					<false/>
					<key>Size</key>
					<integer>511900434432</integer>
					<key>VolumeName</key>
					<string>Preboot</string>
					<key>VolumeUUID</key>
					<string>BF244BFF-8FE3-40D5-9BE1-9867EDE87FA6</string>
				</dict>
				<dict>
					<key>DeviceIdentifier</key>
					<string>disk1s3</string>
					<key>DiskUUID</key>
					<string>6F899BCF-C75C-4883-BEEC-17D35D70047A</string>
					<key>MountedSnapshots</key>
					<array/>
					<key>OSInternal</key>
					<false/>
					<key>Size</key>
					<integer>511900434432</integer>
					<key>VolumeName</key>
					<string>Recovery</string>
					<key>VolumeUUID</key>
					<string>6F899BCF-C75C-4883-BEEC-17D35D70047A</string>
				</dict>
				<dict>
					<key>DeviceIdentifier</key>
					<string>disk1s4</string>
					<key>DiskUUID</key>
					<string>C777FEF1-4D2A-4C56-9411-67EFC737E128</string>
					<key>MountPoint</key>
					<string>/System/Volumes/VM</string>
					<key>MountedSnapshots</key>
					<array/>
					<key>OSInternal</key>
					<false/>
					<key>Size</key>
					<integer>511900434432</integer>
					<key>VolumeName</key>
					<string>VM</string>
					<key>VolumeUUID</key>
					<string>C777FEF1-4D2A-4C56-9411-67EFC737E128</string>
				</dict>
				<dict>
					<key>DeviceIdentifier</key>
					<string>disk1s5</string>
					<key>DiskUUID</key>
					<string>448C3194-12B4-443F-922F-B74C42ECC2BF</string>
					<key>MountedSnapshots</key>
					<array>
						<dict>
							<key>Sealed</key>
							<string>Yes</string>
							<key>SnapshotBSD</key>
							<string>disk1s5s1</string>
							<key>SnapshotMountPoint</key>
							<string>/</string>
							<key>SnapshotName</key>
							<string>com.apple.os.update-8A201A2C7425AB049106E2B28933386B29AA755C130642D7BDEA3C9BDD101B4E</string>
							<key>SnapshotUUID</key>
							<string>C4D08019-3485-4F46-870E-B2BF9EE08B26</string>
						</dict>
					</array>
					<key>OSInternal</key>
					<false/>
					<key>Size</key>
					<integer>511900434432</integer>
					<key>VolumeName</key>
					<string>macOS</string>
					<key>VolumeUUID</key>
					<string>448C3194-12B4-443F-922F-B74C42ECC2BF</string>
				</dict>
				<dict>
					<key>DeviceIdentifier</key>
					<string>disk1s5s1</string>
					<key>DiskUUID</key>
					<string>C4D08019-3485-4F46-870E-B2BF9EE08B26</string>
					<key>MountPoint</key>
					<string>/</string>
					<key>OSInternal</key>
					<false/>
					<key>Size</key>
					<integer>511900434432</integer>
					<key>VolumeName</key>
					<string>macOS</string>
					<key>VolumeUUID</key>
					<string>C4D08019-3485-4F46-870E-B2BF9EE08B26</string>
				</dict>
				<dict>
					<key>DeviceIdentifier</key>
					<string>disk1s6</string>
					<key>DiskUUID</key>
					<string>12349E6E-D069-4AEF-B1C8-4F83C7599CC5</string>
					<key>MountPoint</key>
					<string>/System/Volumes/Update</string>
					<key>MountedSnapshots</key>
					<array/>
					<key>OSInternal</key>
					<true/>
					<key>Size</key>
					<integer>511900434432</integer>
					<key>VolumeName</key>
					<string>Update</string>
					<key>VolumeUUID</key>
					<string>12349E6E-D069-4AEF-B1C8-4F83C7599CC5</string>
				</dict>
			</array>
			<key>Content</key>
			<string>EF57347C-0000-11AA-AA11-00306543ECAC</string>
			<key>DeviceIdentifier</key>
			<string>disk1</string>
			<key>OSInternal</key>
			<false/>
			<key>Partitions</key>
			<array/>
			<key>Size</key>
			<integer>511900434432</integer>
		</dict>
		<dict>
			<key>Content</key>
			<string></string>
			<key>DeviceIdentifier</key>
			<string>disk2</string>
			<key>MountPoint</key>
			<string>/Volumes/NO NAME</string>
			<key>OSInternal</key>
			<false/>
			<key>Size</key>
			<integer>15682240512</integer>
			<key>VolumeName</key>
			<string>NO NAME</string>
		</dict>
	</array>
	<key>VolumesFromDisks</key>
	<array>
		<string>macOS – data</string>
		<string>Preboot</string>
		<string>VM</string>
		<string>macOS</string>
		<string>Update</string>
		<string>NO NAME</string>
	</array>
	<key>WholeDisks</key>
	<array>
		<string>disk0</string>
		<string>disk1</string>
		<string>disk2</string>
	</array>
</dict>
</plist>
"#;

const INFO_DISK0: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Bootable</key>
	<false/>
	<key>BusProtocol</key>
	<string>PCI-Express</string>
	<key>Content</key>
	<string>GUID_partition_scheme</string>
	<key>DeviceBlockSize</key>
	<integer>512</integer>
	<key>DeviceIdentifier</key>
	<string>disk0</string>
	<key>DeviceNode</key>
	<string>/dev/disk0</string>
	<key>DeviceTreePath</key>
	<string>IODeviceTree:/PCI0@0/RP06@1C,5/SSD0@0/IONVMeController</string>
	<key>Ejectable</key>
	<false/>
	<key>IORegistryEntryName</key>
	<string>INTEL SSDPEKNW512G8 Media</string>
	<key>Internal</key>
	<true/>
	<key>MediaName</key>
	<string>INTEL SSDPEKNW512G8</string>
	<key>MountPoint</key>
	<string></string>
	<key>ParentWholeDisk</key>
	<string>disk0</string>
	<key>Removable</key>
	<false/>
	<key>RemovableMedia</key>
	<false/>
	<key>RemovableMediaOrExternalDevice</key>
	<false/>
	<key>Size</key>
	<integer>512110190592</integer>
	<key>SolidState</key>
	<true/>
	<key>TotalSize</key>
	<integer>512110190592</integer>
	<key>VirtualOrPhysical</key>
	<string>Physical</string>
	<key>WholeDisk</key>
	<true/>
	<key>Writable</key>
	<true/>
	<key>WritableMedia</key>
	<true/>
	<key>WritableVolume</key>
	<false/>
</dict>
</plist>
"#;

const INFO_DISK2: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Bootable</key>
	<false/>
	<key>BusProtocol</key>
	<string>USB</string>
	<key>Content</key>
	<string></string>
	<key>DeviceBlockSize</key>
	<integer>512</integer>
	<key>DeviceIdentifier</key>
	<string>disk2</string>
	<key>DeviceNode</key>
	<string>/dev/disk2</string>
	<key>DeviceTreePath</key>
	<string>IODeviceTree:/PCI0@0/XHC1@14</string>
	<key>Ejectable</key>
	<true/>
	<key>FilesystemType</key>
	<string>msdos</string>
	<key>IORegistryEntryName</key>
	<string>SanDisk' Cruzer Fit Media</string>
	<key>Internal</key>
	<false/>
	<key>MediaName</key>
	<string>Cruzer Fit</string>
	<key>MountPoint</key>
	<string>/Volumes/NO NAME</string>
	<key>ParentWholeDisk</key>
	<string>disk2</string>
	<key>Removable</key>
	<true/>
	<key>RemovableMedia</key>
	<true/>
	<key>RemovableMediaOrExternalDevice</key>
	<true/>
	<key>Size</key>
	<integer>15682240512</integer>
	<key>TotalSize</key>
	<integer>15665463296</integer>
	<key>VirtualOrPhysical</key>
	<string>Physical</string>
	<key>VolumeName</key>
	<string>NO NAME</string>
	<key>WholeDisk</key>
	<true/>
	<key>Writable</key>
	<true/>
	<key>WritableMedia</key>
	<true/>
	<key>WritableVolume</key>
	<true/>
</dict>
</plist>
"#;

/// Stands in for `diskutil`: answers from the captures, fails on anything else.
fn diskutil(args: &[&str]) -> std::io::Result<Vec<u8>> {
    let text = match args {
        ["list", "-plist"] => LIST,
        ["info", "-plist", "disk0"] => INFO_DISK0,
        ["info", "-plist", "disk2"] => INFO_DISK2,
        other => {
            return Err(std::io::Error::other(format!(
                "unexpected diskutil {other:?}"
            )))
        }
    };
    Ok(text.as_bytes().to_vec())
}

#[test]
fn list_parses_disks_volumes_and_apfs_stores() {
    let disks = macos::parse_list(LIST.as_bytes()).unwrap();
    let ids: Vec<&str> = disks.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["disk0", "disk1", "disk2"]);
    assert_eq!(disks[0].size, 512_110_190_592);
    assert_eq!(disks[1].physical_stores, ["disk0s2"]);
    assert!(disks[1]
        .volumes
        .contains(&macos::Volume::new("disk1s5s1".into(), Some("/".into()))));
    assert_eq!(
        disks[2].volumes,
        [macos::Volume::new(
            "disk2".into(),
            Some("/Volumes/NO NAME".into())
        )]
    );
}

#[test]
fn info_parses_the_fields_the_rules_need() {
    let usb = macos::parse_info(INFO_DISK2.as_bytes()).unwrap();
    assert_eq!(usb.node, "/dev/disk2");
    assert_eq!(usb.size, 15_682_240_512);
    assert!(usb.removable && !usb.internal && usb.writable);
    assert_eq!(usb.bus, "USB");
    assert_eq!(usb.media_name.as_deref(), Some("Cruzer Fit"));
    let ssd = macos::parse_info(INFO_DISK0.as_bytes()).unwrap();
    assert!(ssd.internal && !ssd.removable);
    assert_eq!(macos::transport(&ssd.bus), Transport::Nvme);
    assert_eq!(macos::transport("Secure Digital"), Transport::Mmc);
}

#[test]
fn the_system_ssd_is_refused_and_the_usb_stick_accepted() {
    let devices = macos::scan(&diskutil).unwrap();
    let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
    // disk1 is the synthesized APFS container: its volumes count on disk0.
    assert_eq!(names, ["disk0", "disk2"]);
    let limits = Limits::new(false);
    let ssd = devices[0].verdict(&limits);
    let codes: Vec<&str> = ssd.refusals.iter().map(Refusal::code).collect();
    assert_eq!(codes, ["not-removable", "holds-system", "too-large"]);
    let Refusal::HoldsSystem { uses } = &ssd.refusals[1] else {
        panic!("{:?}", ssd.refusals)
    };
    assert!(uses.contains(&"/ on disk1s5s1".to_string()), "{uses:?}");
    let stick = devices[1].verdict(&limits);
    assert!(stick.writable(), "{:?}", stick.refusals);
    assert_eq!(stick.unmount, [PathBuf::from("/Volumes/NO NAME")]);
    assert_eq!(devices[1].transport, Transport::Usb);
    assert_eq!(
        devices[1].describe(),
        "/dev/disk2 (Cruzer Fit, usb, 14.6 GiB)"
    );
}

#[test]
fn diskutil_errors_and_garbage_are_errors() {
    let error = r#"<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict><key>Error</key><true/>
<key>ErrorMessage</key><string>Could not find disk: disk9</string></dict></plist>"#;
    let e = macos::parse_info(error.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("Could not find disk: disk9"), "{e}");
    assert!(macos::parse_list(b"not a plist").is_err());
    assert!(macos::scan(&|_| Err(std::io::Error::other("no diskutil"))).is_err());
}
