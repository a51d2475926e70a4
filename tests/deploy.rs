//! deploy/setup.sh on machines it must not touch and on one it would set
//! up, both as --dry-run against a sysfs tree the test builds (the script
//! reads $BLASTDROP_SYSFS instead of /sys).

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

const SETUP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/setup.sh");

/// A sysfs with network interfaces `ifaces` (name, driver, PCI address).
fn fake_sysfs(name: &str, ifaces: &[(&str, &str, &str)]) -> PathBuf {
    let root = std::env::temp_dir().join(format!("blastdrop-{}-sysfs-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for (iface, driver, pci) in ifaces {
        let dev = root.join("devices/pci0000:00").join(pci);
        std::fs::create_dir_all(&dev).unwrap();
        let drv = root.join("bus/pci/drivers").join(driver);
        std::fs::create_dir_all(&drv).unwrap();
        symlink(&drv, dev.join("driver")).unwrap();
        let net = root.join("class/net").join(iface);
        std::fs::create_dir_all(&net).unwrap();
        symlink(&dev, net.join("device")).unwrap();
        let bus = root.join("bus/pci/devices");
        std::fs::create_dir_all(&bus).unwrap();
        symlink(&dev, bus.join(pci)).unwrap();
    }
    hugepage_sizes(&root, &[2048], 2048);
    // The kernel's build config (the script reads $BLASTDROP_KCONFIG for /boot/config-*).
    std::fs::write(root.join("kconfig"), "CONFIG_VFIO=m\nCONFIG_VFIO_NOIOMMU=y\n").unwrap();
    root
}

/// The kernel's hugepage pools (kB each, none reserved) and its default size
/// (/proc/meminfo's Hugepagesize, in the tree's `meminfo`).
fn hugepage_sizes(root: &Path, kb: &[u64], default_kb: u64) {
    for k in kb {
        let d = root.join(format!("kernel/mm/hugepages/hugepages-{k}kB"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("nr_hugepages"), "0\n").unwrap();
    }
    std::fs::write(root.join("meminfo"), format!("MemTotal:       32000000 kB\nHugepagesize:    {default_kb} kB\n")).unwrap();
}

fn setup(sysfs: &Path, args: &[&str]) -> (i32, String, String) {
    setup_env(sysfs, args, &[])
}

fn setup_env(sysfs: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new("bash");
    cmd.arg(SETUP)
        .args(args)
        .env("BLASTDROP_SYSFS", sysfs)
        .env("BLASTDROP_MEMINFO", sysfs.join("meminfo"))
        .env("BLASTDROP_KCONFIG", sysfs.join("kconfig"))
        .env("BLASTDROP_PAGESIZE", "4096");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("bash runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

fn snapshot(root: &Path) -> Vec<(PathBuf, String)> {
    let mut v = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p);
            } else if meta.is_file() {
                v.push((p.clone(), std::fs::read_to_string(&p).unwrap_or_default()));
            } else {
                v.push((p.clone(), format!("-> {:?}", std::fs::read_link(&p).ok())));
            }
        }
    }
    v.sort();
    v
}

#[test]
fn a_machine_without_ena_is_left_alone_with_exit_code_3() {
    let sys = fake_sysfs("no-ena", &[("eth0", "virtio_net", "0000:00:03.0")]);
    let before = snapshot(&sys);
    let hugepages_before = std::fs::read_to_string("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages").ok();
    let (rc, out, err) = setup(&sys, &["--dry-run"]);
    assert_eq!(rc, 3, "documented exit code for no ENA interface: {out}{err}");
    assert!(err.contains("no ENA interface on this machine (network drivers here: virtio_net"), "{err}");
    assert!(err.contains("nothing changed"), "{err}");
    assert!(!out.contains("would "), "no step even planned: {out}");
    // Without --dry-run too: it stops before any step.
    let (rc, out, _) = setup(&sys, &[]);
    assert_eq!(rc, 3);
    assert!(!out.contains("setup: install") && !out.contains("reserve"), "{out}");
    assert_eq!(snapshot(&sys), before, "nothing under the sysfs changed");
    let hugepages_after = std::fs::read_to_string("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages").ok();
    assert_eq!(hugepages_before, hugepages_after, "the real machine's hugepages untouched");
}

#[test]
fn dry_run_on_an_ena_machine_prints_every_step_and_changes_nothing() {
    let sys = fake_sysfs("ena", &[("bd-mgmt0", "ena", "0000:00:05.0"), ("bd-data1", "ena", "0000:00:06.0")]);
    let before = snapshot(&sys);
    let (rc, out, err) = setup(&sys, &["--dry-run", "--iface", "bd-data1", "--hugepages", "64"]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("data interface(s): bd-data1"), "{out}");
    for want in ["would build blastdrop", "would reserve 64 hugepages", "would bind 0000:00:06.0 to vfio-pci"] {
        assert!(out.contains(want), "{want:?} missing from:\n{out}");
    }
    assert!(!out.contains("0000:00:05.0 to vfio-pci"), "only the named interface: {out}");
    let etc = sys.join("etc-blastdrop");
    assert!(out.contains(&format!("would write the EAL arguments (-a 0000:00:06.0) to {}", "/etc/blastdrop/eal-args")), "{out}");
    assert!(!etc.exists());
    assert_eq!(snapshot(&sys), before, "a dry run changes nothing");
}

/// A /proc/cpuinfo of an arm64 part, by its MIDR part number.
fn cpuinfo(sys: &Path, part: &str) -> String {
    let p = sys.join("cpuinfo");
    std::fs::write(&p, format!("processor\t: 0\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU part\t: {part}\n")).unwrap();
    p.display().to_string()
}

#[test]
fn dpdk_from_source_gets_the_graviton_platform_its_release_knows() {
    let sys = fake_sysfs("src", &[("bd-data1", "ena", "0000:00:06.0")]);
    let v2 = cpuinfo(&sys, "0xd4f"); // Neoverse V2: Graviton4 (c8gn)
    let arm = [("BLASTDROP_ARCH", "aarch64"), ("BLASTDROP_CPUINFO", v2.as_str())];
    let (rc, out, err) = setup_env(&sys, &["--dry-run", "--iface", "bd-data1", "--dpdk-source", "24.11.3"], &arm);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("would build DPDK 24.11.3 from source (meson -Dplatform=graviton4)"), "{out}");
    assert!(out.contains("fast.dpdk.org/rel/dpdk-24.11.3.tar.xz"), "{out}");
    // 23.11 has no Graviton4 entry: generic armv8, which runs there.
    let (_, out, _) = setup_env(&sys, &["--dry-run", "--iface", "bd-data1", "--dpdk-source", "23.11.2"], &arm);
    assert!(out.contains("-Dplatform=generic"), "{out}");
    let n1 = cpuinfo(&sys, "0xd0c");
    let (_, out, _) = setup_env(
        &sys,
        &["--dry-run", "--iface", "bd-data1", "--dpdk-source", "22.11.1"],
        &[("BLASTDROP_ARCH", "aarch64"), ("BLASTDROP_CPUINFO", n1.as_str())],
    );
    assert!(out.contains("-Dplatform=graviton2"), "{out}");
    let (rc, _, err) = setup(&sys, &["--dry-run", "--dpdk-source", "21.11.1"]);
    assert_eq!(rc, 2);
    assert!(err.contains("--dpdk-source takes an LTS release blastdrop supports"), "{err}");
}

#[test]
fn on_ena_the_newest_lts_is_built_where_the_distributions_is_older_than_24_11() {
    let sys = fake_sysfs("newest", &[("bd-data1", "ena", "0000:00:06.0"), ("bd-data2", "igb", "0000:00:07.0")]);
    let v2 = cpuinfo(&sys, "0xd4f");
    let c8gn =
        |distro: &'static str| [("BLASTDROP_ARCH", "aarch64"), ("BLASTDROP_CPUINFO", v2.as_str()), ("BLASTDROP_DISTRO_DPDK", distro)];
    // Debian 12's 22.11 on a Graviton4 with an ENA: 25.11 from source, tuned for it, saying why.
    let (rc, out, err) = setup_env(&sys, &["--dry-run", "--iface", "bd-data1"], &c8gn("22.11.11"));
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("the distribution's is 22.11.11, older than 24.11: building 25.11.4"), "{out}");
    assert!(out.contains("would build DPDK 25.11.4 from source (meson -Dplatform=graviton4)"), "{out}");
    // --dpdk-source distro keeps the package.
    let (rc, out, err) = setup_env(&sys, &["--dry-run", "--iface", "bd-data1", "--dpdk-source", "distro"], &c8gn("22.11.11"));
    assert_eq!(rc, 0, "{out}{err}");
    assert!(!out.contains("build DPDK"), "{out}");
    // Debian 13's 24.11 is kept (it is what CI tests), with the way to 25.11 said.
    let (_, out, _) = setup_env(&sys, &["--dry-run", "--iface", "bd-data1"], &c8gn("24.11.8"));
    assert!(out.contains("the distribution's 24.11.8 (24.11 or later: kept; --dpdk-source 25.11.4"), "{out}");
    assert!(!out.contains("build DPDK"), "{out}");
    // Not ENA: none of ENA's reasons apply, the distribution's package stays.
    let (_, out, _) = setup_env(&sys, &["--dry-run", "--iface", "bd-data2"], &c8gn("22.11.11"));
    assert!(out.contains("not ENA: bd-data2") && !out.contains("build DPDK"), "{out}");
}

#[test]
fn without_interrupts_the_devarg_polls_the_admin_queue() {
    let sys = fake_sysfs("uio", &[("bd-data1", "ena", "0000:00:06.0"), ("bd-data2", "ena", "0000:00:07.0")]);
    let args = ["--dry-run", "--iface", "bd-data1", "--iface", "bd-data2", "--driver", "uio_pci_generic", "--etc", "/tmp/bd-etc-test"];
    let (rc, out, err) = setup(&sys, &[&args[..], &["--dpdk-source", "24.11.3"]].concat());
    assert_eq!(rc, 0, "{out}{err}");
    assert!(
        out.contains(
            "-a 0000:00:06.0,control_path_poll_interval=1000 -a 0000:00:07.0,control_path_poll_interval=1000) to /tmp/bd-etc-test/eal-args"
        ),
        "{out}"
    );
    assert!(out.contains("would bind 0000:00:07.0 to uio_pci_generic"), "{out}");
    assert!(err.contains("without write-combining"), "{err}");
    // 22.11 has no such devarg: refused, with the way out.
    let (rc, out, err) = setup(&sys, &[&args[..], &["--dpdk-source", "22.11.11"]].concat());
    assert_eq!(rc, 2, "{err}");
    assert!(!out.contains("would "), "refused before any step: {out}");
    assert!(err.contains("need the control_path_poll_interval devarg of DPDK 24.03+") && err.contains("--driver vfio-pci"), "{err}");
}

#[test]
fn bad_arguments_get_one_line_and_exit_code_2() {
    let sys = fake_sysfs("args", &[]);
    let (rc, _, err) = setup(&sys, &["--hugepages", "lots"]);
    assert_eq!(rc, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--hugepages takes a whole number"), "{err}");
    let (rc, _, err) = setup(&sys, &["--frobnicate"]);
    assert_eq!(rc, 2);
    assert!(err.contains("unknown argument '--frobnicate'"), "{err}");
    let (rc, _, err) = setup(&sys, &["--driver", "igb_uio"]);
    assert_eq!(rc, 2);
    assert!(err.contains("--driver is vfio-pci or uio_pci_generic"), "{err}");
}

/// Hugepages in the sizes the kernel has: 2 MiB pages on a 4K-page kernel,
/// 512 MiB pages on a 64K-page arm64 kernel (where the 2 MiB pool exists
/// too, through contiguous PTEs, but is not what hugetlbfs mounts with).
#[test]
fn hugepages_are_reserved_in_the_kernels_default_size() {
    let sys = fake_sysfs("hp-4k", &[("bd-data1", "ena", "0000:00:06.0")]);
    let (rc, out, err) = setup(&sys, &["--dry-run", "--iface", "bd-data1"]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("would reserve 2048 hugepages of 2 MiB (4096 MiB asked; 4 KiB base pages, default hugepage size 2 MiB)"), "{out}");
    assert!(out.contains("hugepages-2048kB/nr_hugepages"), "{out}");

    let sys = fake_sysfs("hp-64k", &[("bd-data1", "ena", "0000:00:06.0")]);
    hugepage_sizes(&sys, &[2048, 524288, 16777216], 524288);
    let before = snapshot(&sys);
    let k64 = [("BLASTDROP_PAGESIZE", "65536")];
    let (rc, out, err) = setup_env(&sys, &["--dry-run", "--iface", "bd-data1"], &k64);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(
        out.contains("would reserve 8 hugepages of 512 MiB (4096 MiB asked; 64 KiB base pages, default hugepage size 512 MiB)"),
        "{out}"
    );
    assert!(out.contains("hugepages-524288kB/nr_hugepages") && !out.contains("hugepages-2048kB"), "{out}");
    // An amount that is not whole pages is rounded up, and the plan says so.
    let (_, out, _) = setup_env(&sys, &["--dry-run", "--iface", "bd-data1", "--hugepage-mib", "1000"], &k64);
    assert!(out.contains("would reserve 2 hugepages of 512 MiB (1000 MiB asked, rounded up to 1024 MiB;"), "{out}");
    // --hugepages N still means N 2 MiB pages' worth.
    let (_, out, _) = setup_env(&sys, &["--dry-run", "--iface", "bd-data1", "--hugepages", "1024"], &k64);
    assert!(out.contains("would reserve 4 hugepages of 512 MiB (2048 MiB asked;"), "{out}");
    assert_eq!(snapshot(&sys), before, "a dry run changes nothing");

    // Enough reserved already: no step.
    std::fs::write(sys.join("kernel/mm/hugepages/hugepages-524288kB/nr_hugepages"), "8\n").unwrap();
    let (_, out, _) = setup_env(&sys, &["--dry-run", "--iface", "bd-data1"], &k64);
    assert!(!out.contains("reserve"), "{out}");

    // A default size with no pool in sysfs, and no hugepages at all: one line, exit 4.
    let bad = fake_sysfs("hp-none", &[("bd-data1", "ena", "0000:00:06.0")]);
    std::fs::write(bad.join("meminfo"), "Hugepagesize:    1048576 kB\n").unwrap();
    let (rc, _, err) = setup(&bad, &["--dry-run", "--iface", "bd-data1"]);
    assert_eq!(rc, 4, "{err}");
    assert!(err.contains("default hugepage size is 1048576 kB but sysfs lists no pool of that size"), "{err}");
    std::fs::write(bad.join("meminfo"), "MemTotal: 1 kB\n").unwrap();
    let (rc, _, err) = setup(&bad, &["--dry-run", "--iface", "bd-data1"]);
    assert_eq!(rc, 4, "{err}");
    assert!(err.contains("no Hugepagesize"), "{err}");
    let (rc, _, err) = setup(&bad, &["--hugepage-mib", "0"]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("--hugepage-mib takes a whole number of MiB above 0"), "{err}");
}

#[test]
fn any_pci_nic_named_skips_the_ena_steps_and_vfio_needs_an_iommu_or_no_iommu_mode() {
    let sys = fake_sysfs("igb", &[("enp0s4", "igb", "0000:00:04.0"), ("enp0s6", "igb", "0000:00:06.0")]);
    let before = snapshot(&sys);
    let args = ["--dry-run", "--no-build", "--iface", "enp0s4", "--iface", "enp0s6", "--hugepage-mib", "512"];
    let (rc, out, err) = setup_env(&sys, &args, &[("PATH", &format!("{}:/usr/bin:/bin:/usr/sbin:/sbin", env!("CARGO_MANIFEST_DIR")))]);
    // blast and drop are not on that PATH: --no-build says what to do.
    assert_eq!(rc, 2, "{out}{err}");
    assert!(err.contains("--no-build, but no blast on PATH"), "{err}");
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_blast")).parent().unwrap().display().to_string();
    let path = format!("{bin}:/usr/bin:/bin:/usr/sbin:/sbin");
    let (rc, out, err) = setup_env(&sys, &args, &[("PATH", &path)]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("not ENA: enp0s4 (igb) enp0s6 (igb): the ENA-only steps"), "{out}");
    assert!(out.contains("skipped (ENA only): building vfio-pci with write-combining"), "{out}");
    assert!(!out.contains("would build"), "--no-build builds nothing: {out}");
    assert!(out.contains("driver: vfio-pci in no-IOMMU mode"), "{out}");
    assert!(out.contains("would record 0000:00:04.0 (enp0s4, kernel driver igb)"), "{out}");
    assert!(out.contains("would write the EAL arguments (-a 0000:00:04.0 -a 0000:00:06.0)"), "{out}");
    assert!(!err.contains("write-combining"), "no LLQ warning for igb: {err}");
    // No IOMMU and a kernel without no-IOMMU mode: refused, with the ways out.
    std::fs::write(sys.join("kconfig"), "CONFIG_VFIO=m\n# CONFIG_VFIO_NOIOMMU is not set\n").unwrap();
    let (rc, _, err) = setup_env(&sys, &args, &[("PATH", &path)]);
    assert_eq!(rc, 4, "{err}");
    assert!(err.contains("built without vfio's no-IOMMU mode (CONFIG_VFIO_NOIOMMU): use --driver uio_pci_generic"), "{err}");
    // With an IOMMU, vfio-pci goes through it.
    std::fs::create_dir_all(sys.join("class/iommu/dmar0")).unwrap();
    let (rc, out, err) = setup_env(&sys, &args, &[("PATH", &path)]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("driver: vfio-pci through the IOMMU (dmar0)"), "{out}");
    // uio_pci_generic on igb: no ENA devarg, no LLQ warning.
    let uio = [&args[..], &["--driver", "uio_pci_generic"]].concat();
    let (rc, out, err) = setup_env(&sys, &uio, &[("PATH", &path)]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("would write the EAL arguments (-a 0000:00:04.0 -a 0000:00:06.0)"), "{out}");
    assert!(!out.contains("control_path_poll_interval") && !err.contains("write-combining"), "{out}{err}");
    std::fs::remove_dir_all(sys.join("class/iommu")).unwrap();
    std::fs::write(sys.join("kconfig"), "CONFIG_VFIO=m\nCONFIG_VFIO_NOIOMMU=y\n").unwrap();
    let after = snapshot(&sys);
    assert_eq!(after.len(), before.len(), "{after:#?}");
    assert_eq!(after, before, "dry runs change nothing");
    // A name that is no interface here.
    let (rc, _, err) = setup_env(&sys, &["--dry-run", "--no-build", "--iface", "enp9s9"], &[("PATH", &path)]);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("no interface enp9s9 here"), "{err}");
}

/// A virtio-net NIC as the kernel shows it: the interface's `device` is the
/// virtio bus device (virtio0, driver virtio_net) under its PCI parent
/// (driver virtio-pci), whose `features` has VIRTIO_F_ACCESS_PLATFORM (bit
/// 33, one 0/1 character per bit, bit 0 first) or not; in IOMMU group 3 of
/// type `group` when given.
fn virtio_sysfs(name: &str, iface: &str, pci: &str, access_platform: bool, group: Option<&str>) -> PathBuf {
    let root = fake_sysfs(name, &[]);
    let dev = root.join("devices/pci0000:00").join(pci);
    let virtio = dev.join("virtio0");
    std::fs::create_dir_all(&virtio).unwrap();
    for (drv, at) in [("bus/pci/drivers/virtio-pci", &dev), ("bus/virtio/drivers/virtio_net", &virtio)] {
        std::fs::create_dir_all(root.join(drv)).unwrap();
        symlink(root.join(drv), at.join("driver")).unwrap();
    }
    let mut features = [b'0'; 64];
    features[0] = b'1'; // VIRTIO_NET_F_CSUM
    features[32] = b'1'; // VIRTIO_F_VERSION_1
    if access_platform {
        features[33] = b'1';
    }
    std::fs::write(virtio.join("features"), [&features[..], b"\n"].concat()).unwrap();
    std::fs::create_dir_all(root.join("class/net").join(iface)).unwrap();
    symlink(&virtio, root.join("class/net").join(iface).join("device")).unwrap();
    std::fs::create_dir_all(root.join("bus/pci/devices")).unwrap();
    symlink(&dev, root.join("bus/pci/devices").join(pci)).unwrap();
    if let Some(t) = group {
        let g = root.join("kernel/iommu_groups/3");
        std::fs::create_dir_all(&g).unwrap();
        std::fs::write(g.join("type"), format!("{t}\n")).unwrap();
        symlink(&g, dev.join("iommu_group")).unwrap();
        std::fs::create_dir_all(root.join("class/iommu/dmar0")).unwrap();
    }
    root
}

#[test]
fn a_virtio_nic_is_bound_by_its_pci_parents_address_and_given_back_to_virtio_pci() {
    let sys = virtio_sysfs("virtio", "bd-virt0", "0000:00:04.0", false, None);
    let before = snapshot(&sys);
    let etc = sys.join("etc").display().to_string();
    let (rc, out, err) = setup(&sys, &["--dry-run", "--iface", "bd-virt0", "--hugepage-mib", "64", "--etc", &etc]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("not ENA: bd-virt0 (virtio-pci)"), "{out}");
    assert!(out.contains("would record 0000:00:04.0 (bd-virt0, kernel driver virtio-pci)"), "{out}");
    assert!(out.contains("would bind 0000:00:04.0 to vfio-pci"), "{out}");
    assert!(out.contains("would write the EAL arguments (-a 0000:00:04.0)"), "{out}");
    assert!(!out.contains("virtio0"), "the virtio bus device is never what is bound: {out}");
    assert_eq!(snapshot(&sys), before, "a dry run changes nothing");
    // Bound (the interface gone): --undo gives the PCI device back to virtio-pci, not virtio_net.
    std::fs::create_dir_all(&etc).unwrap();
    std::fs::write(sys.join("etc/bound"), "0000:00:04.0 virtio-pci bd-virt0\n").unwrap();
    std::fs::remove_dir_all(sys.join("class/net/bd-virt0")).unwrap();
    let dev = sys.join("devices/pci0000:00/0000:00:04.0");
    std::fs::remove_file(dev.join("driver")).unwrap();
    std::fs::create_dir_all(sys.join("bus/pci/drivers/vfio-pci")).unwrap();
    symlink(sys.join("bus/pci/drivers/vfio-pci"), dev.join("driver")).unwrap();
    let (rc, out, err) = setup(&sys, &["--dry-run", "--undo", "--etc", &etc]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("would give 0000:00:04.0 (bd-virt0) back to the virtio-pci driver"), "{out}");
    // A second set-up run finds it by the record and changes nothing of it.
    let (rc, out, err) = setup(&sys, &["--dry-run", "--iface", "bd-virt0", "--hugepage-mib", "64", "--etc", &etc]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("bd-virt0 (0000:00:04.0) is bound to vfio-pci already"), "{out}");
}

#[test]
fn a_virtio_nic_that_bypasses_a_translating_iommu_is_refused_under_vfio_with_the_fixes() {
    let args = ["--dry-run", "--iface", "bd-virt0", "--hugepage-mib", "64"];
    let uio = [&args[..], &["--driver", "uio_pci_generic"]].concat();
    // No VIRTIO_F_ACCESS_PLATFORM, IOMMU translating: vfio-pci refused before any step.
    let sys = virtio_sysfs("virtio-dma", "bd-virt0", "0000:00:04.0", false, Some("DMA-FQ"));
    let (rc, out, err) = setup(&sys, &args);
    assert_eq!(rc, 4, "{out}{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("bd-virt0 (0000:00:04.0) is a virtio device (virtio0) without VIRTIO_F_ACCESS_PLATFORM (feature bit 33)"),
        "{err}"
    );
    assert!(err.contains("--driver uio_pci_generic") && err.contains("iommu_platform=on"), "{err}");
    assert!(!out.contains("would "), "refused before any step: {out}");
    // Over uio_pci_generic its DMA bypasses the IOMMU: allowed.
    let (rc, out, err) = setup(&sys, &uio);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("would bind 0000:00:04.0 to uio_pci_generic"), "{out}");
    assert!(out.contains("whose DMA bypasses the IOMMU (group type DMA-FQ): uio_pci_generic works with it"), "{out}");
    // vfio-pci translates in its own domain even for an identity (iommu=pt) group: still refused.
    let sys = virtio_sysfs("virtio-pt", "bd-virt0", "0000:00:04.0", false, Some("identity"));
    let (rc, _, err) = setup(&sys, &args);
    assert_eq!(rc, 4, "{err}");
    assert!(err.contains("in IOMMU group type identity"), "{err}");
    // With the feature bit: vfio-pci through the IOMMU; uio_pci_generic is the old refusal.
    let sys = virtio_sysfs("virtio-ap", "bd-virt0", "0000:00:04.0", true, Some("DMA"));
    let (rc, out, err) = setup(&sys, &args);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("driver: vfio-pci through the IOMMU (dmar0)") && out.contains("would bind 0000:00:04.0 to vfio-pci"), "{out}");
    let (rc, _, err) = setup(&sys, &uio);
    assert_eq!(rc, 4, "{err}");
    assert!(err.contains("uio_pci_generic programs no IOMMU"), "{err}");
    // No IOMMU at all: vfio-pci's no-IOMMU mode, nothing to bypass.
    let sys = virtio_sysfs("virtio-noiommu", "bd-virt0", "0000:00:04.0", false, None);
    let (rc, out, err) = setup(&sys, &args);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("driver: vfio-pci in no-IOMMU mode"), "{out}");
}

#[test]
fn an_empty_or_bogus_iface_or_one_without_a_pci_device_gets_one_line_naming_it() {
    let sys = fake_sysfs("iface", &[("bd-data1", "igb", "0000:00:06.0")]);
    for (given, want) in [
        ("", "--iface was given an empty name"),
        ("a/b", "--iface 'a/b' is not an interface name"),
        ("eth0:1", "--iface 'eth0:1' is not an interface name"),
        ("bd-far-too-long-name", "--iface 'bd-far-too-long-name' is not an interface name"),
    ] {
        let (rc, out, err) = setup(&sys, &["--dry-run", "--iface", given]);
        assert_eq!(rc, 2, "{given:?}: {out}{err}");
        assert_eq!(err.lines().count(), 1, "{given:?}: {err}");
        assert!(err.contains(want), "{given:?}: {err}");
        assert!(!err.contains("holds the default route"), "{err}");
    }
    // A veth (no `device`) and a NIC on another bus (no PCI directory above it).
    std::fs::create_dir_all(sys.join("class/net/bd-veth0")).unwrap();
    let usb = sys.join("devices/platform/usb1/1-1/1-1:1.0");
    std::fs::create_dir_all(&usb).unwrap();
    std::fs::create_dir_all(sys.join("class/net/bd-usb0")).unwrap();
    symlink(&usb, sys.join("class/net/bd-usb0/device")).unwrap();
    for iface in ["bd-veth0", "bd-usb0"] {
        let (rc, out, err) = setup(&sys, &["--dry-run", "--iface", iface]);
        assert_eq!(rc, 2, "{iface}: {out}{err}");
        assert_eq!(err.lines().count(), 1, "{iface}: {err}");
        assert!(err.contains(&format!("{iface} has no PCI device")), "{iface}: {err}");
    }
}

#[test]
fn undo_drops_a_stale_line_that_names_no_pci_address() {
    let sys = fake_sysfs("stale", &[("bd-data1", "igb", "0000:00:06.0")]);
    let etc = sys.join("etc");
    std::fs::create_dir_all(&etc).unwrap();
    // What the old setup.sh wrote for a virtio NIC before its bind failed.
    std::fs::write(etc.join("bound"), "virtio0 virtio_net enp0s4\n").unwrap();
    let etc_s = etc.display().to_string();
    let mounts = sys.join("mounts");
    std::fs::write(&mounts, "").unwrap();
    let env = [("BLASTDROP_MOUNTS", mounts.to_str().unwrap())];
    let (rc, out, err) = setup_env(&sys, &["--dry-run", "--undo", "--etc", &etc_s], &env);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("names virtio0 (enp0s4, kernel driver virtio_net), which is no PCI address"), "{out}");
    assert!(out.contains("would forget the bound devices"), "{out}");
    let (rc, out, err) = setup_env(&sys, &["--undo", "--etc", &etc_s], &env);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(!etc.join("bound").exists(), "the stale line is gone: {out}");
    assert!(out.contains("undone: 0 device(s)"), "{out}");
}

#[test]
fn undo_gives_back_what_the_script_reserved_and_names_what_it_leaves() {
    // Bound already, the interface gone: a real (not dry) run touches only the
    // fake sysfs and the --etc directory (dpkg answers from a stub: no install).
    let sys = fake_sysfs("leaves", &[]);
    let dev = sys.join("devices/pci0000:00/0000:7f:1f.7");
    for d in [
        &dev,
        &sys.join("bus/pci/drivers/vfio-pci"),
        &sys.join("bus/pci/drivers/igb"),
        &sys.join("bus/pci/devices"),
        &sys.join("class/iommu/dmar0"),
        &sys.join("stub"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    symlink(sys.join("bus/pci/drivers/vfio-pci"), dev.join("driver")).unwrap();
    symlink(&dev, sys.join("bus/pci/devices/0000:7f:1f.7")).unwrap();
    let etc = sys.join("etc");
    std::fs::create_dir_all(&etc).unwrap();
    std::fs::write(etc.join("bound"), "0000:7f:1f.7 igb bd-gone0\n").unwrap();
    let mounts = sys.join("mounts");
    std::fs::write(&mounts, "nodev /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n").unwrap();
    std::fs::write(sys.join("stub/dpkg"), "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(sys.join("stub/dpkg"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_blast")).parent().unwrap().display().to_string();
    let path = format!("{}:{bin}:/usr/bin:/bin:/usr/sbin:/sbin", sys.join("stub").display());
    let env = [("BLASTDROP_MOUNTS", mounts.to_str().unwrap()), ("PATH", path.as_str())];
    let etc_s = etc.display().to_string();
    let pool = sys.join("kernel/mm/hugepages/hugepages-2048kB/nr_hugepages");
    std::fs::write(&pool, "16\n").unwrap();
    let (rc, out, err) = setup_env(&sys, &["--no-build", "--iface", "bd-gone0", "--hugepage-mib", "64", "--etc", &etc_s], &env);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("setup: reserve 32 hugepages of 2 MiB"), "{out}");
    assert_eq!(std::fs::read_to_string(&pool).unwrap(), "32\n");
    let reserved = std::fs::read_to_string(etc.join("reserved")).unwrap();
    assert_eq!(reserved, format!("hugepages {} 16\n", pool.display()), "recorded with the count before");
    // A second run reserves nothing more and keeps the first record.
    let (rc, out, _) = setup_env(&sys, &["--no-build", "--iface", "bd-gone0", "--hugepage-mib", "64", "--etc", &etc_s], &env);
    assert_eq!(rc, 0);
    assert!(out.contains("nothing to change"), "{out}");
    // Given back (by hand here): --undo gives back the 16 hugepages it added and names the rest.
    std::fs::remove_file(dev.join("driver")).unwrap();
    symlink(sys.join("bus/pci/drivers/igb"), dev.join("driver")).unwrap();
    let (rc, out, err) = setup_env(&sys, &["--dry-run", "--undo", "--etc", &etc_s], &env);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains(&format!("would give back the hugepages this script reserved ({} back to 16)", pool.display())), "{out}");
    let left = out.lines().find(|l| l.starts_with("setup: left as they are")).unwrap_or_else(|| panic!("{out}"));
    for want in [
        "16 hugepages of 2 MiB",
        "hugetlbfs mounted on /dev/hugepages",
        "the vfio-pci module loaded",
        "umount /dev/hugepages",
        "modprobe -r vfio-pci",
    ] {
        assert!(left.contains(want), "{want:?} missing from: {left}");
    }
    let (rc, out, err) = setup_env(&sys, &["--undo", "--etc", &etc_s], &env);
    assert_eq!(rc, 0, "{out}{err}");
    assert_eq!(std::fs::read_to_string(&pool).unwrap(), "16\n", "{out}");
    assert!(!etc.join("reserved").exists() && !etc.join("bound").exists(), "{out}");
    // With no record (what the old script left): all of it is named, nothing given back.
    let (rc, out, _) = setup_env(&sys, &["--dry-run", "--undo", "--etc", &etc_s], &env);
    assert_eq!(rc, 0);
    assert!(!out.contains("give back the hugepages"), "{out}");
    assert!(out.contains("setup: left as they are") && out.contains("16 hugepages of 2 MiB"), "{out}");
}

/// A stub command `name` in `dir` that appends its arguments to `log` and
/// then runs `body` (sh).
fn stub(dir: &Path, name: &str, log: &Path, body: &str) {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\necho \"{name} $*\" >> '{}'\n{body}\n", log.display())).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// A host for setup.sh's AF_XDP mode: its commands stubbed in `stubs`
/// (each call logged to `log`; `ip` and `ethtool` run the bodies given),
/// hugetlbfs mounts as `mounts_text` says, bpffs at `bpffs`.
struct StubbedHost {
    stubs: PathBuf,
    log: PathBuf,
    etc: PathBuf,
    bpffs: PathBuf,
    mounts: PathBuf,
    path: String,
}

impl StubbedHost {
    fn new(sys: &Path, ip: &str, ethtool: &str, mounts_text: &str) -> StubbedHost {
        let (stubs, etc, bpffs, mounts) = (sys.join("stub"), sys.join("etc"), sys.join("bpf"), sys.join("mounts"));
        std::fs::create_dir_all(&stubs).unwrap();
        let log = sys.join("commands.log");
        // The machine's commands, stubbed: every change lands in the log or the fake sysfs.
        stub(&stubs, "dpkg", &log, "exit 0");
        stub(&stubs, "dpkg-query", &log, "echo 'install ok installed'");
        stub(&stubs, "ip", &log, ip);
        stub(&stubs, "mount", &log, "exit 0");
        stub(&stubs, "umount", &log, "exit 0");
        stub(&stubs, "ethtool", &log, ethtool);
        std::fs::write(&mounts, mounts_text).unwrap();
        let bin = Path::new(env!("CARGO_BIN_EXE_blast")).parent().unwrap().display().to_string();
        let path = format!("{}:{bin}:/usr/bin:/bin:/usr/sbin:/sbin", stubs.display());
        StubbedHost { stubs, log, etc, bpffs, mounts, path }
    }

    fn env(&self) -> [(&str, &str); 3] {
        [
            ("BLASTDROP_MOUNTS", self.mounts.to_str().unwrap()),
            ("BLASTDROP_BPFFS", self.bpffs.to_str().unwrap()),
            ("PATH", self.path.as_str()),
        ]
    }
}

#[test]
fn af_xdp_binds_nothing_readies_the_interface_and_undo_puts_it_back() {
    let sys = fake_sysfs("afxdp", &[("bd-data1", "ena", "0000:00:06.0")]);
    let net = sys.join("class/net/bd-data1");
    for (file, value) in [("mtu", "9001"), ("napi_defer_hard_irqs", "0"), ("gro_flush_timeout", "0")] {
        std::fs::write(net.join(file), format!("{value}\n")).unwrap();
    }
    let host = StubbedHost::new(
        &sys,
        "exit 0",
        "[ \"$1\" = -l ] && printf 'Pre-set maximums:\\nCombined:\\t8\\nCurrent hardware settings:\\nCombined:\\t2\\n'; exit 0",
        "nodev /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n",
    );
    let (etc, bpffs, log, env) = (host.etc.clone(), host.bpffs.clone(), host.log.clone(), host.env());
    let etc_s = etc.display().to_string();
    let args = ["--no-build", "--af-xdp", "--xdp-queues", "4", "--iface", "bd-data1", "--hugepage-mib", "64", "--etc", &etc_s];

    let (rc, out, err) = setup_env(&sys, &args, &env);
    assert_eq!(rc, 0, "{out}{err}");
    for want in [
        "lower bd-data1's MTU from 9001 to 3498",
        "set bd-data1's combined channels from 2 to 4",
        "set bd-data1's napi_defer_hard_irqs to 2",
        "set bd-data1's gro_flush_timeout to 200000",
        "mount bpffs on",
        "nothing bound; blast and drop take --port net_af_xdp0",
    ] {
        assert!(out.contains(want), "{want:?} missing from:\n{out}");
    }
    assert!(!out.contains("bind ") && !out.contains("vfio"), "AF_XDP binds nothing: {out}");
    let eal = std::fs::read_to_string(etc.join("eal-args")).unwrap();
    assert_eq!(eal.trim(), "--vdev=net_af_xdp0,iface=bd-data1,start_queue=0,queue_count=4");
    let commands = std::fs::read_to_string(&log).unwrap();
    for want in ["ip link set dev bd-data1 mtu 3498", "ethtool -L bd-data1 combined 4", &format!("mount -t bpf bpf {}", bpffs.display())] {
        assert!(commands.contains(want), "{want:?} not run: {commands}");
    }
    assert_eq!(std::fs::read_to_string(net.join("napi_defer_hard_irqs")).unwrap().trim(), "2");
    assert_eq!(std::fs::read_to_string(net.join("gro_flush_timeout")).unwrap().trim(), "200000");
    let reserved = std::fs::read_to_string(etc.join("reserved")).unwrap();
    for want in ["bpffs ", "mtu bd-data1 9001", "channels bd-data1 2", "napi_defer_hard_irqs 0", "gro_flush_timeout 0"] {
        assert!(reserved.contains(want), "{want:?} not recorded for --undo: {reserved}");
    }

    // --undo puts back what it changed.
    std::fs::write(&log, "").unwrap();
    let (rc, out, err) = setup_env(&sys, &["--undo", "--etc", &etc_s], &env);
    assert_eq!(rc, 0, "{out}{err}");
    let commands = std::fs::read_to_string(&log).unwrap();
    for want in ["ip link set dev bd-data1 mtu 9001", "ethtool -L bd-data1 combined 2", &format!("umount {}", bpffs.display())] {
        assert!(commands.contains(want), "{want:?} not run by --undo: {commands}\n{out}");
    }
    assert_eq!(std::fs::read_to_string(net.join("napi_defer_hard_irqs")).unwrap().trim(), "0");
    assert_eq!(std::fs::read_to_string(net.join("gro_flush_timeout")).unwrap().trim(), "0");
    assert!(!etc.join("eal-args").exists() && !etc.join("reserved").exists());

    // More queues than the interface has, and --xdp-queues alone: one line, exit code 2.
    let mut many = args;
    many[3] = "16";
    let (rc, _, err) = setup_env(&sys, &many, &env);
    assert_eq!(rc, 2, "{err}");
    assert!(err.trim().ends_with("bd-data1 has at most 8 combined channels (ethtool -l bd-data1): --xdp-queues 16 is more"), "{err}");
    let (rc, _, err) = setup_env(&sys, &["--dry-run", "--xdp-queues", "2"], &env);
    assert_eq!(rc, 2);
    assert!(err.contains("--xdp-queues sets an AF_XDP port's queues: give --af-xdp too"), "{err}");
}

#[test]
fn af_xdp_on_the_default_routes_interface_takes_only_the_udp_ports_filter() {
    // An instance with one interface: it holds the default route (this
    // session's). DPDK's own XDP program would take every frame on it;
    // blastdrop's filter takes only UDP to the ports named.
    let sys = fake_sysfs("afxdp-shared", &[("bd-only0", "ena", "0000:00:05.0")]);
    std::fs::write(sys.join("class/net/bd-only0/mtu"), "3498\n").unwrap();
    let route = "case \"$*\" in *route*) echo 'default via 10.0.0.1 dev bd-only0 proto dhcp' ;; esac; exit 0";
    let host = StubbedHost::new(&sys, route, "exit 0", "");
    // clang writes the object its -o names (the last argument).
    stub(&host.stubs, "clang", &host.log, "for a; do out=$a; done; : > \"$out\"");
    let (etc, log, env) = (host.etc.clone(), host.log.clone(), host.env());
    let etc_s = etc.display().to_string();

    // Without the filter: refused, naming it.
    let plain = ["--no-build", "--af-xdp", "--iface", "bd-only0", "--etc", &etc_s];
    let (rc, _, err) = setup_env(&sys, &plain, &env);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("holds the default route") && err.contains("--xdp-udp-ports PORT"), "{err}");
    assert!(!etc.join("eal-args").exists());

    let filtered = ["--no-build", "--af-xdp", "--xdp-udp-ports", "9000-9015", "--iface", "bd-only0", "--etc", &etc_s];
    let (rc, out, err) = setup_env(&sys, &filtered, &env);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("with --xdp-udp-ports only UDP to ports 9000-9015 goes to the sockets"), "{out}");
    assert!(out.contains("build the XDP UDP port filter for ports 9000-9015"), "{out}");
    let object = etc.join("xdp-udp-ports.o");
    assert!(object.exists(), "the filter is built into {}", object.display());
    let commands = std::fs::read_to_string(&log).unwrap();
    assert!(commands.contains("clang -O2 -g -target bpf") && commands.contains("-DBD_PORT_LO=9000 -DBD_PORT_HI=9015"), "{commands}");
    assert!(commands.contains("deploy/xdp/udp-ports.c"), "built from the repository's source: {commands}");
    let eal = std::fs::read_to_string(etc.join("eal-args")).unwrap();
    assert_eq!(eal.trim(), format!("--vdev=net_af_xdp0,iface=bd-only0,start_queue=0,queue_count=1,xdp_prog={}", object.display()));

    // --undo forgets the filter with the EAL arguments.
    let (rc, out, err) = setup_env(&sys, &["--undo", "--etc", &etc_s], &env);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(!object.exists() && !etc.join("eal-args").exists(), "{out}");

    // Ports that are no ports, and the filter without --af-xdp: one line, exit code 2.
    for bad in ["0", "70000", "9-1", "x", "9-", "-9"] {
        let (rc, _, err) = setup_env(&sys, &["--dry-run", "--af-xdp", "--xdp-udp-ports", bad], &env);
        assert_eq!(rc, 2, "{bad}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{bad}: {err}");
        assert!(err.contains("--xdp-udp-ports takes a UDP port"), "{bad}: {err}");
    }
    let (rc, _, err) = setup_env(&sys, &["--dry-run", "--xdp-udp-ports", "9"], &env);
    assert_eq!(rc, 2);
    assert!(err.contains("--xdp-udp-ports filters an AF_XDP port's frames: give --af-xdp too"), "{err}");
}
