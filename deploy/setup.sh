#!/usr/bin/env bash
# Sets up an EC2 instance (or any machine with a PCI NIC) for blastdrop,
# from nothing: DPDK (the distribution's package, or a pinned LTS built from
# source with the platform settings for the CPU: Graviton2/3/4), the Rust
# toolchain and blastdrop; hugepages; the data interface(s) bound to
# vfio-pci (through the IOMMU when the machine has one, else in no-IOMMU
# mode, with write-combining for ENA's LLQ) or uio_pci_generic, checked; the
# EAL arguments for them (devargs included) written to a file. Idempotent: a
# step already done is skipped, and a run with nothing left to do says so.
#
#   deploy/setup.sh [--dry-run] [--undo] [--iface NAME ...] [--hugepage-mib MIB] [--repo DIR]
#                   [--no-build] [--dpdk-source VERSION] [--driver vfio-pci|uio_pci_generic] [--etc DIR]
#                   [--af-xdp [--xdp-queues N] [--xdp-udp-ports LO[-HI]]]
#
#   --dry-run     print every step, change nothing
#   --undo        give the data interface(s) back to the kernel drivers they had
#                 (recorded in DIR/bound at binding; ENA devices without a record: ena),
#                 and the hugepages, hugetlbfs mount and modules this script itself
#                 reserved (DIR/reserved); it names what it leaves (found in place)
#   --iface NAME  the data interface (repeatable) [default: every ENA interface
#                 except the one holding the default route: that is the management one].
#                 Any PCI NIC (igb, e1000e, virtio-net, ixgbe, ice, mlx5...): the ENA-only
#                 steps are skipped, saying so; the PCI device bound is the one above the
#                 interface's (virtio-net: virtio0's PCI parent)
#   --no-build    blastdrop is installed already (the .deb, or blast and drop on PATH):
#                 no build packages, no toolchain, no build; only DPDK's runtime and tools
#   --hugepage-mib MIB  hugepage memory to reserve [default: 4096], in pages of the kernel's
#                 default hugepage size: 2 MiB on 4K-page kernels (x86, most arm64), 512 MiB
#                 on 64K-page arm64 kernels (rounded up to whole pages; the plan says so)
#   --hugepages N the same as --hugepage-mib 2*N (N pages' worth of 2 MiB)
#   --repo DIR    the blastdrop checkout to build [default: this script's repository]
#   --dpdk-source VERSION  build this DPDK LTS release (22.11.x, 23.11.x, 24.11.x, 25.11.x)
#                 from fast.dpdk.org into /usr/local instead of the distribution's package;
#                 on Graviton with -Dplatform=graviton2/3/4 (graviton4 from 24.11 on).
#                 `distro`: the distribution's package. [default: on ENA, 25.11.4 when the
#                 distribution's DPDK is older than 24.11 (docs/ec2.md says why); else distro]
#   --driver D    vfio-pci [default] (interrupts, write-combining with the amzn-drivers
#                 patch) or uio_pci_generic (no interrupts: needs DPDK 24.03+, where ENA's
#                 control_path_poll_interval devarg replaces them; no write-combining)
#   --af-xdp      bind nothing: prepare the interface(s) for DPDK's AF_XDP PMD (net_af_xdp,
#                 docs/af-xdp.md) instead, which leaves them with the kernel: the PMD's
#                 package, bpffs mounted, the MTU within XDP's limit (3498 B on ENA), the
#                 combined channels set (--xdp-queues), preferred busy polling's NAPI
#                 settings; any interface with a kernel driver (veth too), not the one
#                 holding the default route (the PMD's XDP program takes every frame on its
#                 queues, the session's own) unless --xdp-udp-ports. Undone by --undo
#   --xdp-queues N  with --af-xdp: the combined channels to set, and the queues the EAL
#                 arguments name (queue_count) [default: the channels as they are]
#   --xdp-udp-ports LO[-HI]  with --af-xdp: build blastdrop's XDP filter (deploy/xdp/udp-ports.c,
#                 with clang) into DIR/xdp-udp-ports.o and name it in the EAL arguments
#                 (xdp_prog=): only IPv4 UDP to these destination ports goes to the
#                 sockets, every other frame to the kernel, so an instance's one interface
#                 (the default route's, named with --iface) keeps its SSH session
#   --etc DIR     where the EAL arguments file goes [default: /etc/blastdrop]: eal-args holds
#                 the -a options for the data interfaces, devargs included; bound lists
#                 each bound device (PCI address, the kernel driver it had, its interface),
#                 reserved what this script reserved, mounted or loaded (for --undo)
#
# Exit codes: 0 done (or nothing left to do); 2 bad arguments; 3 no ENA
# interface on this machine and none named (nothing changed); 4 a step
# failed (said which).
set -euo pipefail

dry=0 undo=0 nobuild=0 af_xdp=0 xdp_queues="" xdp_ports="" mem_mib=4096 ifaces=() repo="" dpdk_src="" driver=vfio-pci etc=/etc/blastdrop
while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) dry=1 ;;
        --undo) undo=1 ;;
        --iface) [ $# -ge 2 ] || { echo "setup: error: --iface needs an interface name" >&2; exit 2; }
            # The kernel's rule for a name (dev_valid_name): 1 to 15 characters,
            # no '/', ':' or blank, not . or ..
            case "$2" in
                '') echo "setup: error: --iface was given an empty name: give the data interface's name (ip -br link lists them)" >&2; exit 2 ;;
                .|..|*/*|*:*|*[[:space:]]*|????????????????*) echo "setup: error: --iface '$2' is not an interface name (1 to 15 characters, no '/', ':' or blank): ip -br link lists them" >&2; exit 2 ;;
            esac
            ifaces+=("$2"); shift ;;
        --hugepages) [ $# -ge 2 ] || { echo "setup: error: --hugepages needs a number" >&2; exit 2; }
            case "$2" in ''|*[!0-9]*) echo "setup: error: --hugepages takes a whole number of 2 MiB pages' worth (or give --hugepage-mib MIB)" >&2; exit 2 ;; esac
            mem_mib=$(( $2 * 2 )); shift ;;
        --hugepage-mib) [ $# -ge 2 ] || { echo "setup: error: --hugepage-mib needs a number of MiB (e.g. 4096)" >&2; exit 2; }; mem_mib="$2"; shift ;;
        --repo) [ $# -ge 2 ] || { echo "setup: error: --repo needs a directory" >&2; exit 2; }; repo="$2"; shift ;;
        --dpdk-source) [ $# -ge 2 ] || { echo "setup: error: --dpdk-source needs a version (e.g. 24.11.3)" >&2; exit 2; }; dpdk_src="$2"; shift ;;
        --driver) [ $# -ge 2 ] || { echo "setup: error: --driver needs vfio-pci or uio_pci_generic" >&2; exit 2; }; driver="$2"; shift ;;
        --etc) [ $# -ge 2 ] || { echo "setup: error: --etc needs a directory" >&2; exit 2; }; etc="$2"; shift ;;
        --no-build) nobuild=1 ;;
        --af-xdp) af_xdp=1 ;;
        --xdp-queues) [ $# -ge 2 ] || { echo "setup: error: --xdp-queues needs a number of queues (e.g. 4)" >&2; exit 2; }
            case "$2" in ''|*[!0-9]*|0|0*) echo "setup: error: --xdp-queues takes a whole number of queues above 0, not '$2'" >&2; exit 2 ;; esac
            xdp_queues="$2"; shift ;;
        --xdp-udp-ports) [ $# -ge 2 ] || { echo "setup: error: --xdp-udp-ports needs a UDP port or range (e.g. 9, or 9000-9015)" >&2; exit 2; }
            xdp_ports="$2"; shift ;;
        -h|--help) sed -n '2,61p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "setup: error: unknown argument '$1' (see deploy/setup.sh --help)" >&2; exit 2 ;;
    esac
    shift
done
case "$mem_mib" in ''|*[!0-9]*|0) echo "setup: error: --hugepage-mib takes a whole number of MiB above 0, not '$mem_mib'" >&2; exit 2 ;; esac
[ -z "$xdp_queues" ] || [ "$af_xdp" = 1 ] || { echo "setup: error: --xdp-queues sets an AF_XDP port's queues: give --af-xdp too" >&2; exit 2; }
[ -z "$xdp_ports" ] || [ "$af_xdp" = 1 ] || { echo "setup: error: --xdp-udp-ports filters an AF_XDP port's frames: give --af-xdp too" >&2; exit 2; }
port_lo="" port_hi=""
if [ -n "$xdp_ports" ]; then
    port_lo=${xdp_ports%%-*} port_hi=${xdp_ports#*-}
    for p in "$port_lo" "$port_hi"; do
        case "$p" in ''|*[!0-9]*|0*) echo "setup: error: --xdp-udp-ports takes a UDP port (1 to 65535) or a range LO-HI, not '$xdp_ports'" >&2; exit 2 ;; esac
    done
    if [ "$port_lo" -gt 65535 ] || [ "$port_hi" -gt 65535 ] || [ "$port_lo" -gt "$port_hi" ]; then
        echo "setup: error: --xdp-udp-ports takes a UDP port (1 to 65535) or a range LO-HI with LO <= HI, not '$xdp_ports'" >&2
        exit 2
    fi
fi
case "$driver" in vfio-pci|uio_pci_generic) ;; *) echo "setup: error: --driver is vfio-pci or uio_pci_generic, not '$driver'" >&2; exit 2 ;; esac
case "$dpdk_src" in
    ''|distro|22.11|22.11.[0-9]*|23.11|23.11.[0-9]*|24.11|24.11.[0-9]*|25.11|25.11.[0-9]*) ;;
    *) echo "setup: error: --dpdk-source takes an LTS release blastdrop supports (22.11.x, 23.11.x, 24.11.x or 25.11.x) or distro, not '$dpdk_src'" >&2; exit 2 ;;
esac
# The newest LTS release, built by default on ENA when the distribution's is
# older than 24.11 (docs/ec2.md: "Which DPDK").
newest_lts=25.11.4

# Whether version $1 is at least $2 (dotted numbers).
version_ge() { printf '%s\n%s\n' "$2" "$1" | sort -V -C; }

# DPDK's meson platform for this CPU: the Graviton parts by their MIDR part
# number (/proc/cpuinfo), generic on other arm64 parts and for a release
# that does not know the part (Graviton4 arrived in 24.11), native on x86.
dpdk_platform() {
    local version="$1" part
    case "${BLASTDROP_ARCH:-$(uname -m)}" in
        aarch64|arm64)
            part=$(awk -F: '/CPU part/ { gsub(/[ \t]/, "", $2); print $2; exit }' "${BLASTDROP_CPUINFO:-/proc/cpuinfo}")
            case "$part" in
                0xd0c) echo graviton2 ;;
                0xd40) echo graviton3 ;;
                0xd4f) if version_ge "$version" 24.11; then echo graviton4; else echo generic; fi ;;
                *) echo generic ;;
            esac ;;
        *) echo native ;;
    esac
}
[ -n "$repo" ] || repo="$(cd "$(dirname "$0")/.." && pwd)"
SYS="${BLASTDROP_SYSFS:-/sys}"

# Runs a step, or prints it under --dry-run; counts what changed.
changes=0
step() {
    local what="$1"; shift
    changes=$((changes + 1))
    if [ "$dry" = 1 ]; then
        printf 'setup: would %s: %s\n' "$what" "$*"
        return 0
    fi
    printf 'setup: %s\n' "$what"
    "$@" || { echo "setup: error: could not $what (command: $*)" >&2; exit 4; }
}

# --- which interfaces -----------------------------------------------------
ena_ifaces() {
    local d name drv
    for d in "$SYS"/class/net/*; do
        [ -e "$d/device/driver" ] || continue
        name=$(basename "$d")
        drv=$(basename "$(readlink -f "$d/device/driver")")
        [ "$drv" = ena ] && echo "$name"
    done
    return 0
}
mgmt_iface=$(ip -o route show default 2>/dev/null | awk '{for (i = 1; i < NF; i++) if ($i == "dev") print $(i + 1)}' | head -1 || true)
if [ "${#ifaces[@]}" -eq 0 ] && [ "$undo" = 0 ]; then
    mapfile -t all < <(ena_ifaces)
    if [ "${#all[@]}" -eq 0 ]; then
        drivers=$(for d in "$SYS"/class/net/*/device/driver; do [ -e "$d" ] && basename "$(readlink -f "$d")"; done | sort -u | tr '\n' ' ')
        echo "setup: no ENA interface on this machine (network drivers here: ${drivers:-none}): nothing to do, nothing changed." >&2
        echo "setup: this script prepares EC2 instances with ENA interfaces; elsewhere bind your NIC to a DPDK driver yourself (docs/ec2.md)." >&2
        exit 3
    fi
    for i in "${all[@]}"; do [ "$i" = "$mgmt_iface" ] || ifaces+=("$i"); done
    if [ "${#ifaces[@]}" -eq 0 ]; then
        echo "setup: the only ENA interface ($mgmt_iface) holds the default route: it is the management interface and stays with the kernel." >&2
        echo "setup: attach a second interface for the data (the CloudFormation template in deploy/ does), or name one with --iface." >&2
        exit 3
    fi
fi
for i in "${ifaces[@]}"; do
    if [ -n "$mgmt_iface" ] && [ "$i" = "$mgmt_iface" ] && [ "$af_xdp" = 1 ] && [ -z "$xdp_ports" ]; then
        echo "setup: error: $i holds the default route (the management interface): DPDK's AF_XDP PMD loads an XDP program that hands every frame on the queues it serves to its sockets, this session's too, so it would cut this session off; use a second interface, or add --xdp-udp-ports PORT (blastdrop's filter: only UDP to PORT goes to the sockets)" >&2
        exit 2
    fi
    if [ -n "$mgmt_iface" ] && [ "$i" = "$mgmt_iface" ] && [ "$af_xdp" = 1 ]; then
        echo "setup: $i holds the default route: with --xdp-udp-ports only UDP to ports $xdp_ports goes to the sockets; everything else, this session included, stays with the kernel"
        continue
    fi
    if [ -n "$mgmt_iface" ] && [ "$i" = "$mgmt_iface" ]; then
        echo "setup: error: $i holds the default route (the management interface); binding it to DPDK would cut this session off" >&2
        exit 2
    fi
done

# Whether $1 is a PCI address (domain:bus:device.function).
is_pci_addr() { [[ "$1" =~ ^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$ ]]; }
# The PCI device at or above sysfs device directory $1: a driver may hang its
# interface on a bus device of its own (virtio-net: .../0000:00:04.0/virtio0),
# so the nearest directory named by a PCI address is the one to bind.
pci_above() {
    local d
    d=$(readlink -f "$1") || return 0
    while [ -n "$d" ] && [ "$d" != / ]; do
        is_pci_addr "$(basename "$d")" && { basename "$d"; return 0; }
        d=$(dirname "$d")
    done
    return 0
}
# The PCI address behind interface $1: from sysfs while the kernel drives
# it (empty if it has no PCI device: veth, lo), from $etc/bound once this
# script bound it (the interface is gone then).
pci_of() {
    if [ -e "$SYS/class/net/$1/device" ]; then
        pci_above "$SYS/class/net/$1/device"
    elif [ ! -e "$SYS/class/net/$1" ]; then
        awk -v i="$1" '$3 == i { print $1; exit }' "$etc/bound" 2>/dev/null || true
    fi
}
# The driver a PCI device is bound to now (empty: none).
driver_of() {
    [ -e "$SYS/bus/pci/devices/$1/driver" ] && basename "$(readlink -f "$SYS/bus/pci/devices/$1/driver")"
    return 0
}
# The kernel driver interface $1's PCI device had (virtio-pci for virtio-net,
# which --undo binds back): now, or as recorded at binding.
kernel_driver_of() {
    if [ -e "$SYS/class/net/$1" ]; then
        driver_of "$(pci_of "$1")"
    else
        awk -v i="$1" '$3 == i { print $2; exit }' "$etc/bound" 2>/dev/null || true
    fi
}

# --- what this script reserved -------------------------------------------
# DIR/reserved lists what this script itself reserved, mounted or loaded
# (hugepages FILE COUNT-BEFORE | mount DIR | module NAME), written before the
# change, so that --undo gives back exactly that and names the rest.
MOUNTS=${BLASTDROP_MOUNTS:-/proc/mounts}
record_reserved() { # record_reserved KIND WHAT [COUNT-BEFORE]: the first record of KIND WHAT stays
    mkdir -p "$etc"
    awk -v k="$1" -v w="$2" '$1 == k && $2 == w { found = 1 } END { exit !found }' "$etc/reserved" 2>/dev/null ||
        echo "$*" >>"$etc/reserved"
}
reserved() { awk -v k="$1" -v w="$2" '$1 == k && $2 == w { found = 1 } END { exit !found }' "$etc/reserved" 2>/dev/null; }
reserve_hugepages() { # reserve_hugepages FILE COUNT
    record_reserved hugepages "$1" "$(cat "$1")"
    echo "$2" >"$1"
}
mount_hugetlbfs() {
    record_reserved mount /dev/hugepages
    mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages
}
load_module() {
    record_reserved module "$1"
    modprobe "$1"
}
# Giving back must not fail the undo: a module or mount still in use stays, said.
unload_module() { modprobe -r "$1" || echo "setup: warning: $1 stays loaded (modprobe -r $1 failed: still in use?)" >&2; }
unmount_hugetlbfs() { umount "$1" || echo "setup: warning: hugetlbfs stays mounted on $1 (umount failed: a DPDK process still running?)" >&2; }

# The kernel's default hugepage pool, the one hugetlbfs mounts with: sets
# hp_kb, HP (its nr_hugepages) and hp_size. Without one: one line and exit 4,
# or status 1 with `quiet`.
hugepage_pool() {
    hp_kb=$(awk '/^Hugepagesize:/ { print $2; exit }' "${BLASTDROP_MEMINFO:-/proc/meminfo}" 2>/dev/null || true)
    if [ -z "$hp_kb" ]; then
        [ "${1:-}" = quiet ] && return 1
        echo "setup: error: the kernel reports no hugepage size (no Hugepagesize in /proc/meminfo): it was built without hugetlbfs; DPDK then runs only with --no-huge" >&2
        exit 4
    fi
    HP="$SYS/kernel/mm/hugepages/hugepages-${hp_kb}kB/nr_hugepages"
    if [ ! -e "$HP" ]; then
        [ "${1:-}" = quiet ] && return 1
        echo "setup: error: no $HP: the kernel's default hugepage size is ${hp_kb} kB but sysfs lists no pool of that size" >&2
        exit 4
    fi
    if [ "$hp_kb" -ge 1024 ]; then hp_size="$((hp_kb / 1024)) MiB"; else hp_size="$hp_kb kB"; fi
}

# --undo's second half: what DIR/reserved lists goes back (newest first);
# what this script found in place (or a run before this record existed
# made) stays, and is named with how to free it.
undo_resources() {
    local kind what before left=() how=() n m mnt
    while read -r kind what before; do
        case "$kind" in
            module) step "unload $what (this script loaded it)" unload_module "$what" ;;
            mount) step "unmount hugetlbfs from $what (this script mounted it)" unmount_hugetlbfs "$what" ;;
            hugepages) step "give back the hugepages this script reserved ($what back to $before)" sh -c "echo $before > $what" ;;
            bpffs) step "unmount bpffs from $what (this script mounted it)" sh -c "umount $what || echo 'setup: warning: bpffs stays mounted on $what (still in use?)' >&2" ;;
            mtu) step "give $what its MTU back ($before)" sh -c "ip link set dev $what mtu $before || echo 'setup: warning: $what keeps its MTU (is it still there?)' >&2" ;;
            channels) step "give $what its combined channels back ($before)" sh -c "ethtool -L $what combined $before || echo 'setup: warning: $what keeps its channels (is it still there?)' >&2" ;;
            sysfs) step "put $what back to $before" sh -c "echo $before > $what || echo 'setup: warning: $what stays as it is' >&2" ;;
        esac
    done < <(tac "$etc/reserved" 2>/dev/null)
    if hugepage_pool quiet; then
        # What stays in the pool: what was there before this script reserved, or all of it.
        n=$(awk -v f="$HP" '$1 == "hugepages" && $2 == f { print $3; exit }' "$etc/reserved" 2>/dev/null || true)
        [ -n "$n" ] || n=$(cat "$HP")
        [ "$n" -gt 0 ] && left+=("$n hugepages of $hp_size") how+=("echo 0 > $HP")
    fi
    while read -r mnt; do
        reserved mount "$mnt" || { left+=("hugetlbfs mounted on $mnt") how+=("umount $mnt"); }
    done < <(awk '$3 == "hugetlbfs" { print $2 }' "$MOUNTS" 2>/dev/null)
    for m in vfio-pci uio_pci_generic; do
        if [ -d "$SYS/bus/pci/drivers/$m" ] && ! reserved module "$m"; then
            left+=("the $m module loaded") how+=("modprobe -r $m")
        fi
    done
    [ "${#left[@]}" -gt 0 ] || return 0
    echo "setup: left as they are (this script did not reserve them, or reserved them before it kept a record): $(printf '%s, ' "${left[@]}" | sed 's/, $//'); free them, if nothing else needs them, with: $(printf '%s; ' "${how[@]}" | sed 's/; $//')"
}

# --- undo -----------------------------------------------------------------
# Every device this script bound (DIR/bound: address, kernel driver,
# interface) goes back to its kernel driver; an ENA device bound by hand,
# with no record, goes back to ena. A line that names no PCI address (an
# older setup.sh recorded virtio-net's bus device, virtio0, whose bind then
# failed) is said and dropped with the file.
if [ "$undo" = 1 ]; then
    back=() stale=()
    while read -r pci kdrv name; do
        [ -n "$pci" ] || continue
        if ! is_pci_addr "$pci"; then
            stale+=("$pci ${kdrv:-?} ${name:-?}")
            continue
        fi
        case "$(driver_of "$pci")" in
            vfio-pci|uio_pci_generic) back+=("$pci $kdrv ${name:-?}") ;;
        esac
    done < <(cat "$etc/bound" 2>/dev/null)
    for dev in "$SYS"/bus/pci/drivers/vfio-pci/0000:* "$SYS"/bus/pci/drivers/uio_pci_generic/0000:*; do
        [ -e "$dev" ] || continue
        pci=$(basename "$dev")
        printf '%s\n' "${back[@]}" | grep -q "^$pci " && continue
        [ "$(cat "$dev/vendor" 2>/dev/null)" = 0x1d0f ] && back+=("$pci ena ?")
    done
    for s in "${stale[@]}"; do
        read -r dev kdrv name <<<"$s"
        echo "setup: $etc/bound names $dev ($name, kernel driver $kdrv), which is no PCI address: an older setup.sh recorded the device's bus name instead of its PCI parent, and its bind of that name failed (dpdk-devbind.py knows PCI addresses only), so it bound nothing under this line; the line is dropped (bind $name again with this script)"
    done
    if [ "${#back[@]}" -eq 0 ]; then
        echo "setup: no device this script bound (${etc}/bound) and no ENA device is bound to vfio-pci or uio_pci_generic: no device to give back."
    fi
    for b in "${back[@]}"; do
        read -r pci kdrv name <<<"$b"
        step "give $pci ($name) back to the $kdrv driver" dpdk-devbind.py --bind="$kdrv" "$pci"
    done
    if [ -f "$etc/bound" ] || [ -f "$etc/eal-args" ]; then
        step "forget the bound devices and their EAL arguments ($etc/bound, $etc/eal-args)" rm -f "$etc/bound" "$etc/eal-args" "$etc/xdp-udp-ports.o"
    fi
    undo_resources
    [ ! -f "$etc/reserved" ] || step "forget what was reserved ($etc/reserved)" rm -f "$etc/reserved"
    [ "$dry" = 1 ] || echo "setup: undone: ${#back[@]} device(s) back with their kernel drivers."
    exit 0
fi

# Which interfaces are ENA: the steps for ENA's LLQ (write-combining, the
# admin-queue devarg) apply to those only.
ena=() other=()
for i in "${ifaces[@]}"; do
    pci=$(pci_of "$i")
    if [ "$af_xdp" = 1 ] && [ -e "$SYS/class/net/$i" ]; then
        # AF_XDP keeps the kernel's driver: a virtual interface serves too.
        kdrv=$(basename "$(readlink -f "$SYS/class/net/$i/device/driver" 2>/dev/null)" 2>/dev/null || true)
        [ -e "$SYS/class/net/$i/device/driver" ] || kdrv=$(ethtool -i "$i" 2>/dev/null | awk '/^driver:/ { print $2 }' || true)
        if [ "$kdrv" = ena ]; then ena+=("$i"); else other+=("$i (${kdrv:-driver unknown})"); fi
        continue
    fi
    if [ -z "$pci" ] && [ -e "$SYS/class/net/$i" ]; then
        echo "setup: error: $i has no PCI device (a virtual interface: veth, bridge, tun, lo; or a NIC on another bus): DPDK binds PCI NICs only: name one (ls -l /sys/class/net/*/device shows which are)" >&2
        exit 2
    fi
    if [ -z "$pci" ]; then
        echo "setup: error: no interface $i here (and none bound by this script under that name): ip -br link lists them" >&2
        exit 2
    fi
    kdrv=$(kernel_driver_of "$i")
    if [ "$kdrv" = ena ] || [ "$(cat "$SYS/bus/pci/devices/$pci/vendor" 2>/dev/null)" = 0x1d0f ]; then
        ena+=("$i")
    else
        other+=("$i (${kdrv:-no driver})")
    fi
done
any_ena=0
[ "${#ena[@]}" -gt 0 ] && any_ena=1
if [ "$any_ena" = 0 ] && [ "$af_xdp" = 0 ]; then
    echo "setup: not ENA: ${other[*]}: the ENA-only steps (vfio-pci with write-combining for LLQ, ENA's admin-queue devarg, the LLQ check) are skipped"
fi

echo "setup: data interface(s): ${ifaces[*]} (management: ${mgmt_iface:-none found})"

# --- IOMMU traps, refused before anything changes ----------------------------
# The type of the IOMMU group of PCI device $1: DMA or DMA-FQ (the IOMMU
# translates its DMA), identity (iommu=pt), none (no IOMMU). A group without
# a type file (kernels before 5.11) translates unless booted with iommu=pt.
iommu_group_type() {
    local g="$SYS/bus/pci/devices/$1/iommu_group"
    [ -e "$g" ] || { echo none; return 0; }
    cat "$g/type" 2>/dev/null && return 0
    if grep -qs 'iommu=pt' "${BLASTDROP_CMDLINE:-/proc/cmdline}"; then echo identity; else echo "unknown: not booted with iommu=pt"; fi
}
# The virtio device (virtio0...) on PCI device $1 when it lacks
# VIRTIO_F_ACCESS_PLATFORM, feature bit 33: its DMA then bypasses the IOMMU.
# sysfs's features is one 0/1 character per bit, bit 0 first (the kernel's
# ABI: sysfs-bus-virtio); a shorter string (a legacy device) lacks the bit.
virtio_bypassing_iommu() {
    local v f
    for v in "$SYS/bus/pci/devices/$1"/virtio*; do
        [ -r "$v/features" ] || continue
        f=$(cat "$v/features")
        [ "${f:33:1}" = 1 ] || basename "$v"
    done
    return 0
}
for i in "${ifaces[@]}"; do
    [ "$af_xdp" = 0 ] || break # nothing is bound: no IOMMU is in the way
    pci=$(pci_of "$i")
    gtype=$(iommu_group_type "$pci")
    [ "$gtype" != none ] || continue
    bypass=$(virtio_bypassing_iommu "$pci")
    # uio_pci_generic maps nothing in the IOMMU: where the IOMMU translates
    # for the device, its DMA faults and nothing is sent (unless the device
    # bypasses the IOMMU: virtio without VIRTIO_F_ACCESS_PLATFORM).
    if [ "$driver" = uio_pci_generic ] && [ "$gtype" != identity ]; then
        if [ -z "$bypass" ]; then
            echo "setup: error: $i ($pci) is behind an IOMMU that translates its DMA (group type $gtype), and uio_pci_generic programs no IOMMU: use --driver vfio-pci, or boot with iommu=pt" >&2
            exit 4
        fi
        echo "setup: $i ($pci): a virtio device ($bypass) without VIRTIO_F_ACCESS_PLATFORM, whose DMA bypasses the IOMMU (group type $gtype): uio_pci_generic works with it"
    fi
    # vfio-pci maps DPDK's memory at IOVAs in a domain of its own, whatever
    # the group's default type (iommu=pt included); a device that bypasses
    # the IOMMU reads them as physical addresses, and the PMD waits for ever
    # on its first control command.
    if [ "$driver" = vfio-pci ] && [ -n "$bypass" ]; then
        echo "setup: error: $i ($pci) is a virtio device ($bypass) without VIRTIO_F_ACCESS_PLATFORM (feature bit 33) in IOMMU group type $gtype: its DMA bypasses the IOMMU that vfio-pci maps DPDK's memory through, and DPDK would hang on it; use --driver uio_pci_generic (which programs no IOMMU), or give the device iommu_platform=on (QEMU: -device virtio-net-pci,iommu_platform=on,...)" >&2
        exit 4
    fi
done

# The DPDK this machine will run: the one asked for, the one installed, or
# the distribution's candidate. Checked before anything changes.
distro_dpdk=${BLASTDROP_DISTRO_DPDK:-$(pkg-config --modversion libdpdk 2>/dev/null ||
    dpkg-query -W -f '${Version}\n' 'librte-eal*' 2>/dev/null | sed -n '/^[0-9]/ { s/-.*//; p; q }' | grep . ||
    apt-cache policy libdpdk-dev 2>/dev/null | awk '/Candidate:/ { sub(/-.*/, "", $2); print $2 }' || true)}
distro_dpdk=${distro_dpdk#*:}
if [ -z "$dpdk_src" ] && [ "$nobuild" = 0 ] && [ "$any_ena" = 1 ]; then
    if version_ge "${distro_dpdk:-0}" 24.11; then
        echo "setup: DPDK: the distribution's ${distro_dpdk} (24.11 or later: kept; --dpdk-source $newest_lts adds ENA's Rx timestamps)"
        dpdk_src=distro
    else
        echo "setup: DPDK: the distribution's is ${distro_dpdk:-none}, older than 24.11: building $newest_lts, the newest LTS (Graviton4 tuning, ENA Express counters, the admin-queue devarg, Rx timestamps; docs/ec2.md), --dpdk-source distro keeps the package"
        dpdk_src=$newest_lts
    fi
fi
[ "$dpdk_src" != distro ] || dpdk_src=""
dpdk_version=${dpdk_src:-$distro_dpdk}
if [ "$driver" = uio_pci_generic ] && [ "$any_ena" = 1 ] && ! version_ge "${dpdk_version:-0}" 24.03; then
    echo "setup: error: --driver uio_pci_generic has no interrupts, and ENA's admin commands (its allowance counters) then need the control_path_poll_interval devarg of DPDK 24.03+; this DPDK is ${dpdk_version:-unknown}: use --driver vfio-pci, or --dpdk-source 24.11.3" >&2
    exit 2
fi

# --- packages, DPDK, toolchain, blastdrop ----------------------------------
need=()
if [ "$nobuild" = 1 ]; then
    # dpdk-devbind.py; the runtime libraries came with blastdrop's package.
    pkgs=(dpdk)
    [ -z "$dpdk_src" ] || { echo "setup: error: --dpdk-source builds DPDK for a blastdrop build, and --no-build makes none: give one of them" >&2; exit 2; }
elif [ -n "$dpdk_src" ]; then
    pkgs=(meson ninja-build python3-pyelftools libnuma-dev xz-utils libclang-dev pkg-config build-essential git curl)
else
    pkgs=(dpdk dpdk-dev libdpdk-dev libclang-dev pkg-config build-essential git curl)
fi
if [ "$af_xdp" = 1 ]; then
    # The PMD (its package is named for DPDK's ABI: librte-net-af-xdp23 is
    # 22.11's), and ethtool for the channels. A DPDK built from source here
    # gets net/af_xdp only with libxdp and libbpf's headers.
    pkgs+=(ethtool)
    # clang's BPF target and libbpf's headers build the UDP port filter.
    [ -z "$xdp_ports" ] || pkgs+=(clang libbpf-dev)
    if [ -n "$dpdk_src" ]; then
        pkgs+=(libxdp-dev libbpf-dev)
    elif ! dpkg-query -W -f '${Status}\n' 'librte-net-af-xdp*' 2>/dev/null | grep -q 'install ok installed'; then
        xdp_pkg=$(apt-cache pkgnames librte-net-af-xdp 2>/dev/null | sort -V | tail -1)
        [ -n "$xdp_pkg" ] || { echo "setup: error: no package of DPDK's AF_XDP PMD (librte-net-af-xdp*) in this distribution's lists: run apt-get update, or build DPDK with --dpdk-source" >&2; exit 4; }
        pkgs+=("$xdp_pkg")
    fi
fi
for pkg in "${pkgs[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ "${#need[@]}" -gt 0 ]; then
    step "install ${need[*]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
if [ -n "$dpdk_src" ]; then
    triplet=$(gcc -dumpmachine 2>/dev/null || echo unknown)
    export PKG_CONFIG_PATH="/usr/local/lib/$triplet/pkgconfig:/usr/local/lib/pkgconfig:/usr/local/lib64/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    have=$(pkg-config --modversion libdpdk 2>/dev/null || true)
    if [ "$have" != "$dpdk_src" ]; then
        platform=$(dpdk_platform "$dpdk_src")
        src="/opt/dpdk-$dpdk_src"
        # The drivers blastdrop uses, and only those: a build in minutes, not an hour.
        step "build DPDK $dpdk_src from source (meson -Dplatform=$platform) into /usr/local" sh -c \
            "mkdir -p $src && curl -fsSL https://fast.dpdk.org/rel/dpdk-$dpdk_src.tar.xz | tar -xJ -C $src --strip-components=1 && \
             cd $src && meson setup build -Dplatform=$platform -Dbuildtype=release -Dexamples= -Dtests=false \
             -Denable_drivers=net/ena,net/memif,net/null,net/af_packet,net/af_xdp,net/ring,mempool/ring,bus/pci,bus/vdev && \
             ninja -C build install && ldconfig"
    fi
fi

if [ "$nobuild" = 1 ]; then
    for b in blast drop; do
        command -v "$b" >/dev/null 2>&1 || { echo "setup: error: --no-build, but no $b on PATH: install blastdrop's .deb (scripts/package), or leave out --no-build" >&2; exit 2; }
    done
    echo "setup: blastdrop installed: $(command -v blast), $(command -v drop) (--no-build: no toolchain, no build)"
else
    if ! command -v cargo >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
        step "install the Rust toolchain (rustup)" sh -c "curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal"
    fi
    export PATH="$HOME/.cargo/bin:$PATH"
    step "build blastdrop (release) in $repo" cargo build --release --locked --manifest-path "$repo/Cargo.toml"
    changes=$((changes - 1)) # a build of what is built already changes nothing
fi

# --- hugepages --------------------------------------------------------------
# In the kernel's default hugepage size (the one hugetlbfs mounts with):
# 2 MiB with 4K base pages, 512 MiB with the 64K pages some arm64 kernels
# use (there 2 MiB pages exist only through contiguous PTEs).
page_bytes=${BLASTDROP_PAGESIZE:-$(getconf PAGESIZE)}
hugepage_pool
pages=$(( (mem_mib * 1024 + hp_kb - 1) / hp_kb ))
have=$(cat "$HP" 2>/dev/null || echo 0)
if [ "$have" -lt "$pages" ]; then
    got_mib=$(( pages * hp_kb / 1024 ))
    [ "$got_mib" = "$mem_mib" ] && asked="$mem_mib MiB asked" || asked="$mem_mib MiB asked, rounded up to $got_mib MiB"
    step "reserve $pages hugepages of $hp_size ($asked; $((page_bytes / 1024)) KiB base pages, default hugepage size $hp_size)" reserve_hugepages "$HP" "$pages"
    if [ "$dry" = 0 ] && [ "$(cat "$HP")" -lt "$pages" ]; then
        echo "setup: warning: the kernel gave $(cat "$HP") of the $pages hugepages of $hp_size asked (memory too fragmented): reserve them at boot (hugepagesz=/hugepages= on the kernel command line) or reboot and run this again" >&2
    fi
fi
if ! grep -qs ' hugetlbfs ' "$MOUNTS"; then
    step "mount hugetlbfs on /dev/hugepages" mount_hugetlbfs
fi

# --- AF_XDP: nothing bound; the interfaces made ready for net_af_xdp ----------
# docs/af-xdp.md. Each change is recorded in DIR/reserved before it is made
# (KIND WHAT BEFORE: bpffs DIR, mtu IFACE N, channels IFACE N, sysfs FILE
# VALUE) so that --undo puts back what was there.
BPFFS=${BLASTDROP_BPFFS:-/sys/fs/bpf}
# XDP without multi-buffer takes frames up to a page less its headroom and
# tail: ENA refuses a program above MTU 3498.
XDP_MTU_ENA=3498
set_recorded() { # set_recorded KIND WHAT BEFORE COMMAND...: records, then runs
    record_reserved "$1" "$2" "$3"
    shift 3
    "$@"
}
mount_bpffs() { mkdir -p "$BPFFS" && mount -t bpf bpf "$BPFFS"; }
write_file() { echo "$2" >"$1"; }
# The interface's combined channels, or nothing when ethtool cannot say.
# (A veth reports "n/a" where it has none to set.)
channels_of() { ethtool -l "$1" 2>/dev/null | awk '/^Current hardware settings/ { cur = 1 } cur && /^Combined:/ && $2 ~ /^[0-9]+$/ { print $2; exit }'; }
channels_max() { ethtool -l "$1" 2>/dev/null | awk '/^Pre-set maximums/ { pre = 1 } pre && /^Combined:/ && $2 ~ /^[0-9]+$/ { print $2; exit }'; }
if [ "$af_xdp" = 1 ]; then
    if ! grep -qs " $BPFFS bpf " "$MOUNTS"; then
        # libxdp keeps its dispatcher there; without it the PMD loads one program per interface.
        step "mount bpffs on $BPFFS (libxdp's dispatcher keeps its state there)" set_recorded bpffs "$BPFFS" - mount_bpffs
    fi
    prog=""
    if [ -n "$xdp_ports" ]; then
        # The filter, built for these ports (they are fixed at build time).
        build="$(cd "$(dirname "$0")" && pwd)/xdp/build-udp-ports"
        if [ ! -f "$build" ] || [ ! -f "${build%/*}/udp-ports.c" ]; then
            echo "setup: error: ${build%/*}/udp-ports.c or its build-udp-ports is missing: --xdp-udp-ports builds blastdrop's XDP filter from the repository's deploy/xdp" >&2
            exit 2
        fi
        prog="$etc/xdp-udp-ports.o"
        step "build the XDP UDP port filter for ports $port_lo-$port_hi into $prog (clang, BPF target)" sh "$build" "$port_lo" "$port_hi" "$prog"
    fi
    eal="" n=0
    for i in "${ifaces[@]}"; do
        net="$SYS/class/net/$i"
        mtu=$(cat "$net/mtu" 2>/dev/null || true)
        if printf '%s\n' "${ena[@]}" | grep -qx "$i" && [ -n "$mtu" ] && [ "$mtu" -gt "$XDP_MTU_ENA" ]; then
            step "lower $i's MTU from $mtu to $XDP_MTU_ENA (ENA runs no XDP program above it)" set_recorded mtu "$i" "$mtu" ip link set dev "$i" mtu "$XDP_MTU_ENA"
        fi
        have=$(channels_of "$i")
        queues=${xdp_queues:-${have:-1}}
        if [ -n "$xdp_queues" ] && [ "$have" != "$xdp_queues" ]; then
            most=$(channels_max "$i")
            if [ -n "$most" ] && [ "$xdp_queues" -gt "$most" ]; then
                echo "setup: error: $i has at most $most combined channels (ethtool -l $i): --xdp-queues $xdp_queues is more" >&2
                exit 2
            fi
            if [ -z "$have" ]; then
                echo "setup: error: $i's channels cannot be read or set (ethtool -l $i says none): leave out --xdp-queues, and the EAL arguments name one queue" >&2
                exit 2
            fi
            step "set $i's combined channels from $have to $xdp_queues (one AF_XDP socket per queue)" set_recorded channels "$i" "$have" ethtool -L "$i" combined "$xdp_queues"
        fi
        [ -n "$have" ] || echo "setup: $i: ethtool reports no channels: one queue (queue_count=1)"
        # Preferred busy polling (the PMD's busy_budget, on by default): the
        # kernel defers the interface's interrupts while a socket polls.
        for knob in "napi_defer_hard_irqs 2" "gro_flush_timeout 200000"; do
            read -r file want <<<"$knob"
            now=$(cat "$net/$file" 2>/dev/null || true)
            if [ -n "$now" ] && [ "$now" != "$want" ]; then
                step "set $i's $file to $want (preferred busy polling; was $now)" set_recorded sysfs "$net/$file" "$now" write_file "$net/$file" "$want"
            fi
        done
        eal="$eal --vdev=net_af_xdp$n,iface=$i,start_queue=0,queue_count=$queues${prog:+,xdp_prog=$prog}"
        n=$((n + 1))
    done
    eal="${eal# }"
    if [ "$(cat "$etc/eal-args" 2>/dev/null)" != "$eal" ]; then
        step "write the EAL arguments ($eal) to $etc/eal-args" sh -c "mkdir -p '$etc' && echo '$eal' > '$etc/eal-args'"
    fi
    if [ "$dry" = 0 ]; then
        ports=$(seq -f 'net_af_xdp%g' 0 $((n - 1)) | paste -sd, -)
        echo "setup: AF_XDP: nothing bound; blast and drop take --port $ports with these EAL arguments, and each says at start which XDP mode it got (native or generic, zero-copy or copy) and puts it in its record"
        if [ "$changes" = 0 ]; then
            echo "setup: nothing to change: every step was done already. EAL arguments: $eal"
        else
            echo "setup: done ($changes change(s)). EAL arguments: $eal. Next: docs/af-xdp.md, 'Running it'."
        fi
    fi
    exit 0
fi

# --- the data interfaces' driver ---------------------------------------------
if [ "$driver" = uio_pci_generic ]; then
    if [ ! -d "$SYS/bus/pci/drivers/uio_pci_generic" ]; then
        step "load uio_pci_generic" load_module uio_pci_generic
    fi
    if [ "$any_ena" = 1 ]; then
        echo "setup: warning: uio_pci_generic maps the LLQ BAR without write-combining: ENA's LLQ runs far below its rate (vfio-pci with the patch does not)" >&2
    fi
    echo "setup: driver: uio_pci_generic (no IOMMU translation, no interrupts)"
fi
# --- vfio-pci: through the IOMMU, or in no-IOMMU mode; write-combining --------
# Whether the running kernel has vfio's no-IOMMU mode: yes, no, or unknown
# (no config to read, and vfio not loaded to show its parameter).
kernel_noiommu() {
    local release cfg
    release=$(uname -r)
    [ -e "$SYS/module/vfio/parameters/enable_unsafe_noiommu_mode" ] && { echo yes; return; }
    cfg=${BLASTDROP_KCONFIG:-/boot/config-$release}
    if [ -r "$cfg" ]; then
        grep -q '^CONFIG_VFIO_NOIOMMU=y' "$cfg" && echo yes || echo no
    elif [ -r /proc/config.gz ]; then
        zgrep -q '^CONFIG_VFIO_NOIOMMU=y' /proc/config.gz && echo yes || echo no
    else
        echo unknown
    fi
}
if [ "$driver" = vfio-pci ] && [ ! -d "$SYS/bus/pci/drivers/vfio-pci" ]; then
    step "load vfio-pci" load_module vfio-pci
fi
if [ "$driver" = vfio-pci ]; then
    iommus=$(find "$SYS/class/iommu" -mindepth 1 -maxdepth 1 -printf '%f ' 2>/dev/null || true)
    if [ -n "$iommus" ]; then
        echo "setup: driver: vfio-pci through the IOMMU (${iommus% })"
        # An IOMMU without MSI isolation (no interrupt remapping: QEMU's
        # SMMUv3, some arm64 parts) makes vfio refuse the device unless told.
        unsafe="$SYS/module/vfio_iommu_type1/parameters/allow_unsafe_interrupts"
        if [ "${BLASTDROP_ARCH:-$(uname -m)}" = aarch64 ] && [ -e "$unsafe" ] && [ "$(cat "$unsafe")" != Y ] &&
            ! grep -qs 'ITS' /proc/interrupts; then
            step "let vfio use interrupts without MSI isolation (this IOMMU has none: no GIC ITS)" sh -c "echo 1 > $unsafe"
        fi
    else
        noiommu="$SYS/module/vfio/parameters/enable_unsafe_noiommu_mode"
        case "$(kernel_noiommu)" in
            no)
                echo "setup: error: this machine has no IOMMU and its kernel ($(uname -r)) was built without vfio's no-IOMMU mode (CONFIG_VFIO_NOIOMMU): use --driver uio_pci_generic, or turn the IOMMU on (intel_iommu=on / amd_iommu=on on the kernel command line)" >&2
                exit 4 ;;
            *)
                echo "setup: driver: vfio-pci in no-IOMMU mode (no IOMMU here; the kernel has CONFIG_VFIO_NOIOMMU)"
                if [ "$(cat "$noiommu" 2>/dev/null)" != Y ]; then
                    step "enable vfio's no-IOMMU mode (this instance has no IOMMU)" sh -c "echo 1 > $noiommu"
                fi ;;
        esac
    fi
fi
# Stock vfio-pci maps BARs uncached: ENA's LLQ then runs far below its
# rate. amzn-drivers' get-vfio-with-wc.sh builds vfio-pci with
# write-combining for the running kernel.
if [ "$driver" = vfio-pci ] && [ "$any_ena" = 0 ]; then
    echo "setup: skipped (ENA only): building vfio-pci with write-combining for LLQ"
elif [ "$driver" = vfio-pci ] && ! modinfo vfio-pci 2>/dev/null | grep -qi 'write.combin\|wc'; then
    step "build vfio-pci with write-combining (amzn-drivers get-vfio-with-wc.sh)" sh -c \
        "cd /tmp && rm -rf amzn-drivers && git clone -q --depth 1 https://github.com/amzn/amzn-drivers && \
         cd amzn-drivers/userspace/dpdk/enav2-vfio-patch && ./get-vfio-with-wc.sh"
fi
record_bound() { # record_bound PCI KERNEL-DRIVER IFACE
    mkdir -p "$etc"
    { grep -v "^$1 " "$etc/bound" 2>/dev/null || true; echo "$1 $2 $3"; } >"$etc/bound.new"
    mv "$etc/bound.new" "$etc/bound"
}
for i in "${ifaces[@]}"; do
    pci=$(pci_of "$i")
    kdrv=$(kernel_driver_of "$i")
    now=$(driver_of "$pci")
    if [ "$now" = "$driver" ]; then
        echo "setup: $i ($pci) is bound to $driver already"
        continue
    fi
    if [ -e "$SYS/class/net/$i" ]; then
        step "bring $i ($pci) down" ip link set "$i" down
    fi
    # Recorded before binding: --undo must find it even if the bind fails half-way.
    if [ -n "$kdrv" ] && [ "$kdrv" != vfio-pci ] && [ "$kdrv" != uio_pci_generic ]; then
        step "record $pci ($i, kernel driver $kdrv) in $etc/bound for --undo" record_bound "$pci" "$kdrv" "$i"
    fi
    step "bind $pci to $driver" dpdk-devbind.py --bind="$driver" "$pci"
done

# --- EAL arguments ------------------------------------------------------------
# Devargs by DPDK line: without interrupts (uio_pci_generic), the admin
# commands that read the allowance counters are polled (1000 ms: 24.11.3+
# accepts only 500 to 1000).
eal=""
for i in "${ifaces[@]}"; do
    devargs=""
    if [ "$driver" = uio_pci_generic ] && printf '%s\n' "${ena[@]}" | grep -qx "$i"; then
        devargs=",control_path_poll_interval=1000"
    fi
    eal="$eal -a $(pci_of "$i")$devargs"
done
eal="${eal# }"
if [ "$(cat "$etc/eal-args" 2>/dev/null)" != "$eal" ]; then
    step "write the EAL arguments ($eal) to $etc/eal-args" sh -c "mkdir -p '$etc' && echo '$eal' > '$etc/eal-args'"
fi

# --- checks ---------------------------------------------------------------
if [ "$dry" = 0 ] && [ "$any_ena" = 1 ]; then
    pat=/sys/kernel/debug/x86/pat_memtype_list
    if [ -r "$pat" ]; then
        if grep -q write-combining "$pat"; then
            echo "setup: write-combining: on (a write-combining mapping is in $pat once DPDK maps the BAR; blast prints LLQ's state at start)"
        else
            echo "setup: write-combining: no write-combining mapping yet; it appears when DPDK maps the BAR. If blast reports LLQ disabled, rerun this script." >&2
        fi
    else
        echo "setup: write-combining: cannot be read here ($pat is x86-only, or debugfs is not mounted); ENA's PMD logs whether LLQ runs with it at start"
    fi
fi
if [ "$dry" = 0 ]; then
    if [ "$changes" = 0 ]; then
        echo "setup: nothing to change: every step was done already. EAL arguments: $eal"
    else
        echo "setup: done ($changes change(s)). EAL arguments: $eal. Next: docs/ec2.md, 'Run'."
    fi
fi
