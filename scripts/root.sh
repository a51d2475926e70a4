# shellcheck shell=bash
# Debian roots from Debian's own packages, for the DPDK lines and
# architectures this machine's distribution does not ship (sourced by
# scripts/dpdk-line, scripts/arm64 and scripts/vm). A root is made once with debootstrap
# (minbase) and kept under ${BLASTDROP_CACHE:-/var/cache/blastdrop}/roots,
# outside the clone so that CI's fresh clones reuse it; it is made again when
# missing, when its recipe (suite, architectures, packages) changed, or when
# older than 30 days. Entering it binds the checkout at /src, the host's
# cargo home (its registry: builds inside run --offline) and /proc, /sys,
# /dev; every mount is undone on every exit path (root_cleanup, trapped).
# Needs root (debootstrap, chroot, mounts).

root_dir=""
root_mounted=()
# root_key: what a cached target directory (root_cached_target) must be
# made again for: this root as made (recipe, when), the dependencies
# (root_lock_digest) and TOOLCHAIN.
root_key() { # root_key TOOLCHAIN-DESCRIPTION
    printf '%s %s %s %s' "$(cat "$root_dir/.blastdrop-ready")" "$(stat -c %Y "$root_dir/.blastdrop-ready")" "$(root_lock_digest)" "$1"
}

# root_lock_digest: the digest of ./Cargo.lock's packages from a
# registry or git (those with a `source`), not of this workspace's own:
# a new edge between the workspace's crates changes Cargo.lock but not one
# dependency, and must not start a cache directory from nothing.
root_lock_digest() {
    awk 'BEGIN { RS = "" } /\nsource = / { print; print "" }' Cargo.lock | sha256sum | cut -d' ' -f1
}
# Commands that undo what a script set up beside the mounts (binfmt entries),
# run by root_cleanup before the mounts go.
root_undo=()

root_cleanup() {
    local i
    for ((i = ${#root_undo[@]} - 1; i >= 0; i--)); do
        eval "${root_undo[$i]}" 2>/dev/null || true
    done
    root_undo=()
    root_unmount
}

# Every mount under the current root, and those made for it.
root_unmount() {
    local i m
    [ -n "$root_dir" ] || return 0
    # Mounts made inside (ip netns binds /run/netns), deepest first.
    while read -r m; do
        umount -l "$m" 2>/dev/null || true
    done < <(awk -v r="$root_dir/" 'index($2, r) == 1 { print $2 }' /proc/self/mounts | sort -r)
    for ((i = ${#root_mounted[@]} - 1; i >= 0; i--)); do
        umount -l "${root_mounted[$i]}" 2>/dev/null || true
    done
    root_mounted=()
}

root_bind() { # root_bind SOURCE TARGET-INSIDE-ROOT
    mkdir -p "$root_dir$2"
    mount --bind "$1" "$root_dir$2"
    root_mounted+=("$root_dir$2")
}

root_need_root() { # root_need_root SCRIPT-NAME
    if [ "$(id -u)" -ne 0 ]; then
        echo "blastdrop: error: $1 needs root (debootstrap, chroot, mounts): run it with sudo" >&2
        exit 2
    fi
}

root_system_mounts() {
    mount -t proc proc "$root_dir/proc"
    root_mounted+=("$root_dir/proc")
    root_bind /dev /dev
    root_bind /sys /sys
}

# root_make NAME SUITE "FOREIGN-ARCHES" "PACKAGES" WHAT [ARCH]
# Sets root_dir; makes the root when it is missing or stale. ARCH: the
# root's own architecture when it is not the host's (arm64: needs a binfmt
# entry for it first, root_binfmt_aarch64).
root_make() {
    local name=$1 suite=$2 arches=$3 packages=$4 what=$5 arch=${6:-}
    local cache=${BLASTDROP_CACHE:-/var/cache/blastdrop}/roots
    root_dir=$cache/$name
    local stamp=$root_dir/.blastdrop-ready
    local recipe="suite=$suite arches=$arches packages=$packages${arch:+ arch=$arch}"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$recipe" ] &&
        [ -n "$(find "$stamp" -mtime -30 2>/dev/null)" ]; then
        return 0
    fi
    if ! command -v debootstrap >/dev/null 2>&1; then
        echo "blastdrop: installing debootstrap" >&2
        apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null
    fi
    # The mirror this host's apt uses (Debian's packages are reachable; nothing else is).
    local mirror
    mirror=$(grep -rhoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
        | grep -oE 'https?://[^ ]+' | head -n 1 || true)
    mirror=${mirror:-http://deb.debian.org/debian}
    echo "== making $what in $root_dir (from $mirror; kept for later runs)" >&2
    mkdir -p "$cache"
    rm -rf "$root_dir"
    debootstrap --variant=minbase ${arch:+--arch=$arch} --keyring=/usr/share/keyrings/debian-archive-keyring.gpg "$suite" "$root_dir" "$mirror" >/dev/null
    # Debian's testing and unstable suites: this mirror may serve their
    # Release files past Valid-Until (debootstrap does not check it, apt does).
    case "$suite" in
        testing | unstable | sid | forky)
            echo 'Acquire::Check-Valid-Until "false";' >"$root_dir/etc/apt/apt.conf.d/99blastdrop-valid-until" ;;
    esac
    root_system_mounts
    local add="" a
    for a in $arches; do add="$add dpkg --add-architecture $a;"; done
    chroot "$root_dir" /bin/sh -c "export DEBIAN_FRONTEND=noninteractive; $add apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends $packages >/dev/null"
    root_unmount
    printf '%s\n' "$recipe" >"$stamp"
}

# root_enter SRC: the mounts a command inside needs; SRC (the checkout) at /src.
root_enter() {
    local src=$1
    # The root a mount point of its own: `ip -n NS` re-marks / (mount
    # --make-rslave), which a plain directory refuses.
    mount --bind "$root_dir" "$root_dir"
    root_mounted+=("$root_dir")
    root_system_mounts
    mkdir -p "$root_dir/dev/shm" "$root_dir/run/netns"
    root_bind "$src" /src
    root_bind "${CARGO_HOME:-$HOME/.cargo}" /root/.cargo
}

# root_binfmt_aarch64 QEMU: for this script's life, a binfmt_misc entry
# hands aarch64 ELF files to QEMU (a qemu-aarch64 inside a root; flag F: the
# kernel opens it now, so it works inside any chroot). Removed by
# root_cleanup, with binfmt_misc's mount if this made it. A host that
# already has an enabled aarch64 entry keeps it, and it is used.
root_binfmt_aarch64() {
    local qemu=$1 binfmt=/proc/sys/fs/binfmt_misc entry name magic mask
    if [ ! -e "$binfmt/register" ]; then
        mount -t binfmt_misc binfmt_misc "$binfmt"
        root_undo+=("umount $binfmt")
    fi
    for entry in "$binfmt"/*; do
        if [ -f "$entry" ] && grep -q '^magic 7f454c460201010000000000000000000200b700' "$entry" 2>/dev/null &&
            grep -q '^enabled' "$entry"; then
            return 0
        fi
    done
    name=blastdrop-aarch64-$$
    # ELF, 64-bit, little-endian, executable or shared object, machine 183 (aarch64).
    magic='\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
    mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
    printf ':%s:M::%s:%s:%s:F\n' "$name" "$magic" "$mask" "$qemu" >"$binfmt/register"
    root_undo+=("echo -1 > $binfmt/$name")
}

# The aarch64 cross root (scripts/arm64; scripts/vm --arch arm64 takes its
# qemu-aarch64 and its dpkg database of DPDK's arm64 packages).
root_make_arm64_cross() {
    root_make arm64 trixie arm64 \
        "gcc-aarch64-linux-gnu libc6-dev:arm64 libdpdk-dev:arm64 clang libclang-dev pkg-config gcc libc6-dev qemu-user rustc-web cargo-web libstd-rust-web-dev:arm64 iproute2 procps binutils file ca-certificates" \
        "a Debian 13 root for aarch64 (cross gcc, DPDK 24.11 for arm64, qemu-user, Rust 1.96)"
}

# root_cached_target SUBDIR KEY: the checkout's target/SUBDIR (a root
# stage's CARGO_TARGET_DIR) kept outside the clone, under
# ${BLASTDROP_CACHE:-/var/cache/blastdrop}/targets/SUBDIR-<hash of KEY>, so
# that a fresh clone's root stage builds this workspace's crates and not
# every dependency again. target/SUBDIR becomes a symlink to it, bound into
# the root at the same path; a real directory there (a developer's own
# build) is used as it is. KEY holds what cargo's fingerprints do not see:
# the root (its recipe and when it was made: a root made again may carry
# another DPDK point release, and dpdk-ffi's build script reruns only when
# its own files change) and, for tidiness, the toolchain and Cargo.lock; a
# new key starts a new directory and removes the old ones. Cargo judges
# sources by mtime, which two checkouts sharing one directory would fool (an
# older checkout's files look older than the other's artifacts), so the
# directory records the checkout that built in it last, and another checkout
# first cleans this workspace's own crates there (root_target_prelude, run
# inside before the command); a lock held until the script exits keeps two
# runs from building or testing in it at once. Call after root_enter; or
# with no root (root_dir empty) for a host profile's directory, PROFILE-FLAGS
# naming that profile (--release) so that the clean leaves the host's other
# profiles alone; the prelude is then run on the host.
# shellcheck disable=SC2034 # read by the scripts that source this one
root_target_prelude=":"
root_cached_target() { # root_cached_target SUBDIR KEY [PROFILE-FLAGS]
    local subdir=$1 key=$2 clean_flags=${3:-} src
    src=$(pwd -P)
    root_target_prelude=":"
    if [ -e "target/$subdir" ] && [ ! -L "target/$subdir" ]; then
        echo "== target/$subdir is this checkout's own directory: used as it is, not the shared cache" >&2
        return 0
    fi
    local cache=${BLASTDROP_CACHE:-/var/cache/blastdrop}/targets hash dir old
    hash=$(printf '%s' "$key" | sha256sum | cut -c1-16)
    dir=$cache/$subdir-$hash
    mkdir -p "$dir" target
    exec {root_target_lock}>"$cache/$subdir.lock"
    if ! flock -n "$root_target_lock"; then
        echo "== waiting for another run to finish with $cache/$subdir-*" >&2
        flock "$root_target_lock"
    fi
    for old in "$cache/$subdir"-*; do
        [ "$old" = "$dir" ] || [ ! -d "$old" ] || rm -rf "$old"
    done
    ln -sfn "$dir" "target/$subdir"
    # Inside a root, at the same path (none on the host: scripts/test's release).
    [ -z "$root_dir" ] || root_bind "$dir" "$dir"
    if [ -z "$(ls -A "$dir")" ]; then
        # New (a fresh machine): nothing built, nothing to clean. cargo clean
        # -p could not even run here: offline, it needs the registry's index,
        # which a fresh machine has not fetched yet.
        printf '%s\n' "$src" >"$dir/.blastdrop-checkout"
        echo "== target/$subdir: $dir, new: built from nothing" >&2
    elif [ "$(cat "$dir/.blastdrop-checkout" 2>/dev/null)" != "$src" ]; then
        # The record is written only once the clean succeeded.
        local packages profiles clean="" flags
        packages=$(root_workspace_packages)
        # cargo clean -p cleans one profile's directory: each of Cargo.toml's
        # (dev and test share debug; release; emulated), or the one named;
        # and, for a cross build, the target's own directory only when given
        # --target (it does not read CARGO_BUILD_TARGET; expanded inside).
        profiles=${clean_flags:-"|--release|--profile emulated"}
        IFS='|' read -r -a profiles <<<"$profiles"
        for flags in "${profiles[@]}"; do
            clean="${clean}cargo clean --offline --quiet $flags $packages && "
            clean="${clean}{ [ -z \"\${CARGO_BUILD_TARGET:-}\" ] || cargo clean --offline --quiet $flags --target \"\$CARGO_BUILD_TARGET\" $packages; } && "
        done
        # shellcheck disable=SC2034 # read by the scripts that source this one
        root_target_prelude="${clean}printf '%s\n' '$src' >'$dir/.blastdrop-checkout'"
        echo "== target/$subdir: $dir, last built from another checkout: this workspace's crates are built again there" >&2
    else
        echo "== target/$subdir: $dir (kept between runs)" >&2
    fi
}

# The workspace's own packages, as `-p NAME` arguments for cargo clean.
root_workspace_packages() {
    local f
    for f in Cargo.toml dpdk-ffi/Cargo.toml crates/*/Cargo.toml; do
        sed -n '/^\[package\]/,/^\[/s/^name = "\(.*\)"/-p \1/p' "$f" | head -n 1
    done | tr '\n' ' '
}
