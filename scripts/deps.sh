# shellcheck shell=bash
# Installs what blastdrop needs to build and test, when it is missing, on
# Debian or Ubuntu: DPDK (the distribution's package), libclang for bindgen,
# a C compiler for the shim, pkg-config, iproute2 for the veth tests, and
# the Rust toolchain. Idempotent: with everything present it changes nothing.
# Sourced by scripts/demo and scripts/test (`blastdrop_deps test` adds the
# test command's linters).

blastdrop_deps() {
    local need=()
    command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
    command -v cc >/dev/null 2>&1 || need+=(build-essential)
    pkg-config --exists libdpdk 2>/dev/null || need+=(dpdk-dev libdpdk-dev)
    command -v dpdk-testpmd >/dev/null 2>&1 || need+=(dpdk)
    # No grep -q: it would exit at the first match, and under pipefail the
    # SIGPIPE that ldconfig then gets would read as "not found".
    if ! ldconfig -p 2>/dev/null | grep 'libclang[-.0-9]*\.so' >/dev/null; then
        need+=(libclang-dev)
    fi
    command -v ip >/dev/null 2>&1 || need+=(iproute2)
    # "bench-sockets": scripts/bench --sockets runs iperf3 -u beside blast's socket sender.
    if [ "${1:-}" = bench-sockets ]; then
        command -v iperf3 >/dev/null 2>&1 || need+=(iperf3)
    fi
    # "test": the test command, which also lints the shell scripts; "run": the rest.
    if [ "${1:-}" = test ]; then
        command -v shellcheck >/dev/null 2>&1 || need+=(shellcheck)
        # DPDK 24.11 and 25.11 come from Debian 13 and testing roots (scripts/dpdk-line).
        command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
        # Debian's signing keys (on Ubuntu too), to check the root's packages.
        [ -f /usr/share/keyrings/debian-archive-keyring.gpg ] || need+=(debian-archive-keyring)
        # tc's token-bucket shaper for the long-run tests (iproute2), and a real
        # Prometheus server with promtool for the /metrics tests.
        command -v tc >/dev/null 2>&1 || need+=(iproute2)
        # ethtool turns a veth's checksum offload off for round trips through drop on a port (tests/sockets.rs).
        command -v ethtool >/dev/null 2>&1 || need+=(ethtool)
        { command -v prometheus && command -v promtool; } >/dev/null 2>&1 || need+=(prometheus)
        # A real browser to render `blast report`'s HTML in the report test (Ubuntu's
        # chromium is a snap stub: chromium-browser is tried there too).
        { command -v chromium || command -v chromium-browser; } >/dev/null 2>&1 || need+=(chromium fonts-dejavu-core)
        # tshark checks what a replay sends (tests/replay.rs); DEBIAN_FRONTEND=noninteractive below takes its setuid question's default (no).
        command -v tshark >/dev/null 2>&1 || need+=(tshark)
        # clang's BPF target and libbpf's headers build the XDP UDP port filter (deploy/xdp, tests/af_xdp.rs).
        command -v clang >/dev/null 2>&1 || need+=(clang)
        # A venv for RFC 9971's reference implementation (PyPI MLRsearch, pinned), the oracle of tests/mlr.rs.
        python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)
        [ -f /usr/include/bpf/bpf_helpers.h ] || need+=(libbpf-dev)
    fi
    if [ "${#need[@]}" -gt 0 ]; then
        echo "blastdrop: installing ${need[*]}" >&2
        local sudo=""
        if [ "$(id -u)" -ne 0 ]; then
            if command -v sudo >/dev/null 2>&1; then
                sudo="sudo"
            else
                echo "blastdrop: error: missing ${need[*]}; run as root or install them with apt-get" >&2
                return 1
            fi
        fi
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq || return 1
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null || return 1
    fi
    if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
    if ! command -v cargo >/dev/null 2>&1; then
        echo "blastdrop: installing the Rust toolchain with rustup (https://rustup.rs)" >&2
        command -v curl >/dev/null 2>&1 || { ${sudo:-} apt-get install -y -qq curl >/dev/null || return 1; }
        curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal || {
            echo "blastdrop: error: no cargo, and rustup could not be fetched; install Rust (rustup.rs)" >&2
            return 1
        }
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
    # The toolchain the lock needs (Cargo.toml's rust-version), and for the
    # test command the lint gates' components.
    local want have
    want=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
    have=$(rustc --version | awk '{print $2}')
    if [ -n "$want" ] && [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -n 1)" != "$want" ]; then
        echo "blastdrop: error: Rust $have is older than the $want this build needs (Cargo.toml rust-version): run rustup update" >&2
        return 1
    fi
    if [ "${1:-}" = test ]; then
        for component in clippy rustfmt; do
            if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1; then
                echo "blastdrop: installing the Rust $component component" >&2
                rustup component add "$component" >/dev/null || {
                    echo "blastdrop: error: no cargo ${component/rustfmt/fmt}, and rustup could not add it: rustup component add $component" >&2
                    return 1
                }
            fi
        done
    fi
    local version
    version=$(pkg-config --modversion libdpdk)
    case "$version" in
        22.11*|23.11*|24.11*|25.11*) ;;
        *) echo "blastdrop: error: DPDK $version found; blastdrop supports the 22.11, 23.11, 24.11 and 25.11 LTS lines (Debian 12, Ubuntu 24.04, Debian 13, Debian testing ship them): install one of those, or point PKG_CONFIG_PATH at one you built" >&2
           return 1 ;;
    esac
}
