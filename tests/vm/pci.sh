#!/bin/bash
# Runs inside the scripts/vm guest: what a user with a PCI NIC does, from
# deploy/setup.sh to a blast -> drop ladder over the hardware PMD, then
# --undo, for each NIC model the guest was given (its arguments: igb,
# virtio, e1000e, virtio-bypass; scripts/vm --nics gives the NICs):
#   igb     vfio-pci through the guest's IOMMU (a paced and an unpaced
#           ladder, drop killed with -9 three times), then uio_pci_generic
#   virtio  vfio-pci (the devices have iommu_platform=on), then
#           uio_pci_generic; two queue pairs each
#   e1000e  vfio-pci; DPDK's em gives it two queues and no RSS: drop runs
#           one, and the ladder's 4-queue step is left out
#           and, back on the kernel's igb driver, blast and drop on its UDP
#           sockets (no DPDK), the receiving NIC in a network namespace,
#           then over DPDK's AF_XDP PMD (deploy/setup.sh --af-xdp, XDP in
#           the igb driver, two queues)
#   virtio-bypass (during virtio's vfio case) the IOMMU trap: setup.sh
#           refuses it; bound by hand, drop must end in bounded time
#           naming the device that did not answer, and blast on its peer
#           link must say what drop was doing
# It judges nothing: every command's output, exit status and record goes
# to $OUT, and tests/vm.rs (on the host) asserts on them. Each stage is
# bounded.
#   scripts/vm --nics igb,virtio,e1000e,virtio-bypass 'bash tests/vm/pci.sh igb virtio e1000e virtio-bypass'
set -u
t0=$(date +%s)
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(igb)
has_model() { [[ " ${models[*]} " == *" $1 "* ]]; }
stage() { echo "== vm: $* (at $(( $(date +%s) - t0 )) s)"; }
# run NAME CMD...: CMD's stdout+stderr in $OUT/NAME.txt, its status in $OUT/NAME.rc.
run() {
    local name=$1; shift
    "$@" >"$OUT/$name.txt" 2>&1
    echo $? >"$OUT/$name.rc"
    sed "s/^/  $name| /" "$OUT/$name.txt" | grep -v '^  [^|]*| EAL: \|TELEMETRY' | tail -n 40
}
# A model's NICs (vendor:device), in address order: igb's 82576 at 00:04.0
# and 00:06.0 on x86_64's q35 (01:00.0 and 02:00.0 behind arm64's root
# ports); virtio's modern devices; e1000e's 82574L; the one transitional
# virtio device (the bypass case).
pci_id() {
    case "$1" in
        igb) echo 0x8086:0x10c9 ;;
        e1000e) echo 0x8086:0x10d3 ;;
        virtio) echo 0x1af4:0x1041 ;;
        virtio-bypass) echo 0x1af4:0x1000 ;;
    esac
}
nics_of() {
    local id d
    id=$(pci_id "$1")
    for d in /sys/bus/pci/devices/*; do
        [ "$(cat "$d/vendor"):$(cat "$d/device")" = "$id" ] && basename "$d"
    done | sort
}
# The kernel driver each model comes back to after --undo.
kernel_driver() {
    case "$1" in igb) echo igb ;; e1000e) echo e1000e ;; *) echo virtio-pci ;; esac
}
# The kernel's name for a NIC: the first boot's udev names them (enp0s4),
# and after --undo the kernel's own names come back (eth0): by address,
# directly under the PCI device or under its virtio device (virtio0).
ifname() {
    find "/sys/bus/pci/devices/$1/" -mindepth 2 -maxdepth 3 -path '*/net/*' -printf "%f\n" 2>/dev/null | head -n 1
}
setup=/work/deploy/setup.sh
hp_mib=768
# snapshot TX RX: the state the set-up script changes
snapshot() {
    local d
    for d in "$@"; do
        echo "$d $(basename "$(readlink -f /sys/bus/pci/devices/"$d"/driver 2>/dev/null)")"
    done
    cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
    cat /etc/blastdrop/eal-args /etc/blastdrop/bound 2>/dev/null
    grep -c hugetlbfs /proc/mounts
    lsmod | awk '$1 ~ /^(vfio_pci|vfio|uio_pci_generic)$/ { print $1 }' | sort
}

{
    echo "kernel $(uname -r)"
    echo "cpus $(nproc)"
    lscpu 2>/dev/null | grep -E '^(Model name|Thread|Core|Socket)' || true
    echo "iommu: $(ls /sys/class/iommu)"
    grep -E 'VFIO_NOIOMMU' "/boot/config-$(uname -r)" || echo "CONFIG_VFIO_NOIOMMU absent"
    grep -E 'ITS|MSI' /proc/interrupts | head -n 3
    ip -br link
    lspci -nn 2>/dev/null
} >"$OUT/guest.txt" 2>&1
cat "$OUT/guest.txt"

# start_drop PREFIX RX QUEUES NAME: drop on RX with QUEUES RX queues, its
# control on 127.0.0.1:7700; sets drop_pid.
start_drop() {
    local prefix=$1 rx=$2 queues=$3 name=$4 json=()
    [ "$name" = drop ] && json=(--json "$OUT/$prefix-drop.json")
    drop --port "$rx" --queues "$queues" --listen 127.0.0.1:7700 --duration 600 "${json[@]}" \
        -- -a "$rx" --in-memory >"$OUT/$prefix-$name.txt" 2>&1 &
    drop_pid=$!
    for _ in $(seq 1 120); do grep -q "control on" "$OUT/$prefix-$name.txt" 2>/dev/null && break; sleep 0.5; done
}

# stop_drop PREFIX: drop ended by SIGINT (its record written), at most 30 s.
stop_drop() {
    local waited=0
    kill -INT "$drop_pid" 2>/dev/null
    while kill -0 "$drop_pid" 2>/dev/null && [ "$waited" -lt 30 ]; do sleep 1; waited=$((waited + 1)); done
    kill -9 "$drop_pid" 2>/dev/null
    wait "$drop_pid"
    echo $? >"$OUT/$1-drop.rc"
}

# killed_rounds PREFIX ROUNDS TX RX QUEUES BLAST_ARGS...: drop killed with
# -9 mid-ladder: blast must say the receiver is gone, and the next drop
# must open the NIC the killed one held. drop is running on entry.
killed_rounds() {
    local prefix=$1 rounds=$2 tx=$3 rx=$4 queues=$5 round blast_pid waited
    shift 5
    for round in $(seq 1 "$rounds"); do
        [ "$round" -gt 1 ] && start_drop "$prefix" "$rx" "$queues" "drop-$round"
        stage "$prefix: drop killed with -9 in a ladder, round $round"
        blast --port "$tx" --peer 127.0.0.1:7700 --repeat 3 "$@" --json "$OUT/$prefix-killed-$round.json" \
            -- -a "$tx" --in-memory >"$OUT/$prefix-killed-$round.txt" 2>&1 &
        blast_pid=$!
        for _ in $(seq 1 240); do grep -q "step 1 (" "$OUT/$prefix-killed-$round.txt" 2>/dev/null && break; sleep 0.5; done
        # Each round kills it at another point of the next step.
        sleep "$round"
        kill -9 "$drop_pid" 2>/dev/null
        wait "$drop_pid" 2>/dev/null
        waited=0
        while kill -0 "$blast_pid" 2>/dev/null && [ "$waited" -lt 120 ]; do sleep 1; waited=$((waited + 1)); done
        kill -9 "$blast_pid" 2>/dev/null
        wait "$blast_pid"
        echo $? >"$OUT/$prefix-killed-$round.rc"
        sed "s/^/  killed-$round| /" "$OUT/$prefix-killed-$round.txt" | grep -v 'EAL:' | grep -i 'gone\|error\|panick' | tail -n 5
    done
}

# bypass_case: a virtio NIC without iommu_platform. setup.sh refuses it
# under vfio-pci; bound by hand (as a user who skips the script would),
# drop's first control command to the device is never answered: drop must
# end by itself in bounded time with one line naming the device, and blast
# (on a null port, its peer that drop) must say what drop was doing. Runs
# while virtio's vfio case holds hugepages and vfio-pci.
bypass_case() {
    local pci if t blast_pid
    pci=$(nics_of virtio-bypass | head -n 1)
    if=$(ifname "$pci")
    echo "$pci" >"$OUT/nics-virtio-bypass"
    stage "virtio-bypass: deploy/setup.sh --driver vfio-pci --iface $if (must refuse)"
    run bypass-setup timeout 60 bash "$setup" --no-build --iface "$if" --hugepage-mib "$hp_mib" --driver vfio-pci
    stage "virtio-bypass: $pci bound to vfio-pci by hand; drop on it must end by itself"
    run bypass-bind dpdk-devbind.py --bind=vfio-pci "$pci"
    t=$(date +%s)
    # drop gives a device call 10 s; blast waits 4 s for its peer, so it
    # hears what drop is doing before drop gives up.
    timeout -s KILL 120 drop --port "$pci" --listen 127.0.0.1:7701 --duration 60 --device-timeout 10 --json "$OUT/bypass-drop.json" \
        -- -a "$pci" --in-memory >"$OUT/bypass-drop.txt" 2>&1 &
    drop_pid=$!
    for _ in $(seq 1 60); do grep -q "memory:" "$OUT/bypass-drop.txt" 2>/dev/null && break; sleep 0.5; done
    run bypass-blast timeout -s KILL 100 blast --port net_null0 --peer 127.0.0.1:7701 --duration 1 --control-timeout 4 \
        -- --vdev net_null0 --no-pci --in-memory &
    blast_pid=$!
    wait "$drop_pid"
    echo $? >"$OUT/bypass-drop.rc"
    echo $(( $(date +%s) - t )) >"$OUT/bypass-drop.seconds"
    wait "$blast_pid"
    sed "s/^/  bypass-drop| /" "$OUT/bypass-drop.txt" | grep -v 'EAL:' | tail -n 8
    run bypass-unbind dpdk-devbind.py --bind=virtio-pci "$pci"
}

# model_case MODEL CASE: set-up (twice), ladders, --undo.
model_case() {
    local model=$1 case=$2 prefix="$1-$2" driver=vfio-pci tx rx tx_if rx_if queues=2 ladder_queues=1,2 flows=8 rx_mac eal tx_a rx_a
    [ "$case" = uio ] && driver=uio_pci_generic
    # DPDK's em gives the 82574L two queues and no RSS: drop runs one, and
    # blast's ladder asks for 4 as well, which must be left out.
    [ "$model" = e1000e ] && queues=1 ladder_queues=1,2,4
    read -r tx rx <<<"$(nics_of "$model" | head -n 2 | tr '\n' ' ')"
    echo "$tx $rx" >"$OUT/nics-$model"
    tx_if=$(ifname "$tx") rx_if=$(ifname "$rx")
    rx_mac=$(cat "/sys/class/net/$rx_if/address")
    stage "$prefix: deploy/setup.sh --driver $driver --iface $tx_if --iface $rx_if (first run)"
    run "$prefix-setup-1" timeout 120 bash "$setup" --no-build --iface "$tx_if" --iface "$rx_if" --hugepage-mib "$hp_mib" --driver "$driver"
    snapshot "$tx" "$rx" >"$OUT/$prefix-state-1"
    stage "$prefix: deploy/setup.sh again (must change nothing)"
    run "$prefix-setup-2" timeout 120 bash "$setup" --no-build --iface "$tx_if" --iface "$rx_if" --hugepage-mib "$hp_mib" --driver "$driver"
    snapshot "$tx" "$rx" >"$OUT/$prefix-state-2"

    # drop on the second NIC, blast on the first, each with its own -a
    # from the EAL arguments the set-up script wrote.
    eal=$(cat /etc/blastdrop/eal-args)
    read -r _ tx_a _ rx_a <<<"$eal"
    echo "$eal" >"$OUT/$prefix-eal-args"
    # Paced steps at a rate the emulated path carries, on 1 and 2 queues
    # with 8 flows, so the receiving NIC's RSS spreads them over its RX
    # queues.
    local ladder=(--queues "$ladder_queues" --rx-queues "$queues" --flows "$flows" --rate 20k --duration 3 --warmup 1 --dst-mac "$rx_mac")
    stage "$prefix: drop on $rx_a ($queues RX queues), blast on $tx_a"
    start_drop "$prefix" "$rx_a" "$queues" drop
    stage "$prefix: paced ladder, queues 1,2 at 20k frames/s"
    run "$prefix-paced" timeout 240 blast --port "$tx_a" --peer 127.0.0.1:7700 "${ladder[@]}" --json "$OUT/$prefix-paced.json" \
        -- -a "$tx_a" --in-memory
    if [ "$case" = vfio ]; then
        local rounds=1
        if [ "$model" = igb ]; then
            rounds=3
            # Unpaced, the emulator drops frames no counter sees: that loss
            # must come out as a limit with its evidence, never `none`.
            # Each step cross-checked: the C lanes on the same igb queues.
            stage "$prefix: unpaced steps, 1 and 2 queues, cross-checked with the C lanes"
            run "$prefix-unpaced" timeout 240 blast --port "$tx_a" --peer 127.0.0.1:7700 --queues 1,2 --rx-queues 2 --flows 4 \
                --duration 3 --warmup 1 --dst-mac "$rx_mac" --cross-check --json "$OUT/$prefix-unpaced.json" -- -a "$tx_a" --in-memory
        fi
        killed_rounds "$prefix" "$rounds" "$tx_a" "$rx_a" "$queues" "${ladder[@]}"
        if [ "$model" = virtio ] && has_model virtio-bypass; then
            bypass_case
        fi
    else
        stop_drop "$prefix"
    fi
    stage "$prefix: deploy/setup.sh --undo"
    run "$prefix-undo" timeout 60 bash "$setup" --undo
    sleep 1
    snapshot "$tx" "$rx" >"$OUT/$prefix-state-undo"
    echo "$(ifname "$tx") $(ifname "$rx")" >"$OUT/$prefix-ifnames-undo"
}

# socket_case: blast and drop on the kernel's UDP sockets over the igb pair,
# back with the kernel's igb driver after --undo (no DPDK, no EAL): the
# receiving NIC in a network namespace of its own (with both addresses in
# one, the kernel would deliver through loopback), drop's control channel
# on the same link (with a shared secret, as drop asks off loopback), a
# paced ladder over queues 1 and 2 and 64 and 1518 B without GSO, then one
# step with GSO buffers of 32, then one timed step (drop reflects every
# datagram and times each probe one way, its own record kept). Bounded: the
# ladders 240, 120 and 120 s, drop's end 30 s.
socket_case() {
    local tx rx tx_if rx_if pid waited=0
    read -r tx rx <<<"$(nics_of igb | head -n 2 | tr '\n' ' ')"
    tx_if=$(ifname "$tx") rx_if=$(ifname "$rx")
    stage "igb-sockets: blast --socket on $tx_if to drop --socket on $rx_if (in a namespace), kernel igb driver"
    ip netns add bd-rx
    ip link set "$rx_if" netns bd-rx
    ip addr add 198.18.0.1/24 dev "$tx_if"
    ip link set "$tx_if" up
    ip -n bd-rx link set lo up
    ip -n bd-rx addr add 198.18.0.2/24 dev "$rx_if"
    ip -n bd-rx link set "$rx_if" up
    # The emulated links take a moment to come up.
    for _ in $(seq 1 40); do
        ip -n bd-rx -br link show "$rx_if" | grep -q ' UP ' && ip -br link show "$tx_if" | grep -q ' UP ' && break
        sleep 0.5
    done
    ip -br link show "$tx_if" >"$OUT/igb-sockets-links.txt" 2>&1
    ip -n bd-rx -br link show "$rx_if" >>"$OUT/igb-sockets-links.txt" 2>&1
    export BLASTDROP_TOKEN=blastdrop-guest-sockets-secret
    ip netns exec bd-rx drop --socket 198.18.0.2:9 --queues 2 --listen 198.18.0.2:7700 --duration 600 --reflect --one-way \
        --json "$OUT/igb-sockets-drop.json" >"$OUT/igb-sockets-drop.txt" 2>&1 &
    pid=$!
    for _ in $(seq 1 60); do grep -q "control on" "$OUT/igb-sockets-drop.txt" 2>/dev/null && break; sleep 0.5; done
    local blast_to=(blast --socket --src-ip 198.18.0.1 --dst-ip 198.18.0.2 --dst-port 9 --peer 198.18.0.2:7700 --rate 20k --warmup 1)
    # One datagram a message, as most socket programs send.
    run igb-sockets timeout 240 "${blast_to[@]}" --no-gso --queues 1,2 --size 64,1518 --duration 3 --json "$OUT/igb-sockets.json"
    # GSO buffers of 32: what the NIC's UDP segmentation makes of them.
    run igb-sockets-gso timeout 120 "${blast_to[@]}" --queues 1 --size 64 --duration 2 --json "$OUT/igb-sockets-gso.json"
    # Round trips over the emulated NIC, on blast's sockets.
    run igb-sockets-rtt timeout 120 "${blast_to[@]}" --no-gso --reflect --queues 1 --size 64 --duration 2 --json "$OUT/igb-sockets-rtt.json"
    kill -INT "$pid" 2>/dev/null
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 30 ]; do sleep 1; waited=$((waited + 1)); done
    kill -9 "$pid" 2>/dev/null
    wait "$pid"
    echo $? >"$OUT/igb-sockets-drop.rc"
    unset BLASTDROP_TOKEN
    # The NIC goes back to the first namespace with the second.
    ip netns del bd-rx
    ip addr del 198.18.0.1/24 dev "$tx_if"
}

# af_xdp_case: DPDK's AF_XDP PMD (net_af_xdp) over the igb pair on the
# kernel's igb driver, which runs XDP natively: deploy/setup.sh --af-xdp
# --xdp-queues 2 binds nothing (bpffs, two combined channels each, the EAL
# arguments); drop serves both queues from the start (the NIC's RSS spreads
# over every channel); a table of two paced rates on two queues with 8 flows
# (the UDP ports put in igb's RSS hash); then a ladder over queues 1 and 2, which
# an AF_XDP port cannot run in one process (its PMD does not remake its XDP
# sockets): refused when it asks; --undo (hugepages as for the DPDK cases).
# Skipped, and said so, where the guest's DPDK has no AF_XDP PMD. Bounded:
# the runs 240 and 120 s, drop's end 30 s.
af_xdp_case() {
    local tx rx tx_if rx_if rx_mac eal tx_vdev rx_vdev tx_port rx_port pid waited=0
    if ! ls /usr/lib/*/dpdk/pmds-*/librte_net_af_xdp.so* >/dev/null 2>&1; then
        echo "no AF_XDP PMD in this guest's DPDK" >"$OUT/igb-xdp.skipped"
        return
    fi
    read -r tx rx <<<"$(nics_of igb | head -n 2 | tr '\n' ' ')"
    # The receiving NIC comes back from the socket case's namespace as the namespace goes: wait for it.
    for _ in $(seq 1 40); do
        tx_if=$(ifname "$tx") rx_if=$(ifname "$rx")
        [ -n "$tx_if" ] && [ -n "$rx_if" ] && [ -e "/sys/class/net/$rx_if" ] && break
        sleep 0.5
    done
    rx_mac=$(cat "/sys/class/net/$rx_if/address")
    ip link set "$tx_if" up
    ip link set "$rx_if" up
    stage "igb-xdp: deploy/setup.sh --af-xdp --xdp-queues 2 --iface $tx_if --iface $rx_if"
    run igb-xdp-setup timeout 120 bash "$setup" --no-build --af-xdp --xdp-queues 2 --iface "$tx_if" --iface "$rx_if" --hugepage-mib "$hp_mib"
    # With AF_XDP the kernel's RSS picks each frame's queue, and igb hashes
    # UDP on its addresses alone by default: the ports too, so that flows spread.
    run igb-xdp-hash ethtool -N "$rx_if" rx-flow-hash udp4 sdfn
    { ethtool -l "$tx_if"; ethtool -l "$rx_if"; ethtool -n "$rx_if" rx-flow-hash udp4; ethtool -x "$rx_if"; ip -d link show "$tx_if"; } >"$OUT/igb-xdp-channels.txt" 2>&1
    eal=$(cat /etc/blastdrop/eal-args 2>/dev/null)
    echo "$eal" >"$OUT/igb-xdp-eal-args"
    tx_vdev=$(tr ' ' '\n' <<<"$eal" | grep -- "iface=$tx_if,")
    rx_vdev=$(tr ' ' '\n' <<<"$eal" | grep -- "iface=$rx_if,")
    tx_port=${tx_vdev#--vdev=} rx_port=${rx_vdev#--vdev=}
    tx_port=${tx_port%%,*} rx_port=${rx_port%%,*}
    stage "igb-xdp: drop on ${rx_vdev#--vdev=}, blast on ${tx_vdev#--vdev=}"
    drop --port "$rx_port" --queues 2 --listen 127.0.0.1:7700 --duration 600 --json "$OUT/igb-xdp-drop.json" \
        -- "$rx_vdev" --in-memory >"$OUT/igb-xdp-drop.txt" 2>&1 &
    pid=$!
    for _ in $(seq 1 120); do grep -q "control on" "$OUT/igb-xdp-drop.txt" 2>/dev/null && break; sleep 0.5; done
    run igb-xdp timeout 240 blast --port "$tx_port" --peer 127.0.0.1:7700 --queues 2 --rx-queues 2 --flows 8 --rate 10k,20k --duration 3 \
        --warmup 1 --dst-mac "$rx_mac" --json "$OUT/igb-xdp.json" -- "$tx_vdev" --in-memory
    run igb-xdp-ladder timeout 120 blast --port "$tx_port" --peer 127.0.0.1:7700 --queues 1,2 --rx-queues 2 --flows 8 --rate 10k \
        --duration 1 --warmup 0.5 --dst-mac "$rx_mac" --json "$OUT/igb-xdp-ladder.json" -- "$tx_vdev" --in-memory
    kill -INT "$pid" 2>/dev/null
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 30 ]; do sleep 1; waited=$((waited + 1)); done
    kill -9 "$pid" 2>/dev/null
    wait "$pid"
    echo $? >"$OUT/igb-xdp-drop.rc"
    stage "igb-xdp: deploy/setup.sh --undo"
    run igb-xdp-undo timeout 60 bash "$setup" --undo
    { ethtool -l "$tx_if"; ethtool -l "$rx_if"; } >"$OUT/igb-xdp-channels-undo.txt" 2>&1
}

for model in igb virtio e1000e; do
    has_model "$model" || continue
    model_case "$model" vfio
    [ "$model" = e1000e ] || model_case "$model" uio
    [ "$model" = igb ] && { socket_case; af_xdp_case; }
done
stage "done"
