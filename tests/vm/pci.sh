#!/bin/bash
# Runs inside the scripts/vm guest (two igb NICs on one QEMU hub): what a
# user with a PCI NIC does, from deploy/setup.sh to a blast -> drop ladder
# over the hardware PMD (net_e1000_igb), then --undo; once with vfio-pci
# through the guest's IOMMU and once with uio_pci_generic. It judges
# nothing: every command's output, exit status and record goes to $OUT,
# and tests/vm.rs (on the host) asserts on them. Each stage is bounded.
#   scripts/vm 'bash tests/vm/pci.sh'
set -u
t0=$(date +%s)
stage() { echo "== vm: $* (at $(( $(date +%s) - t0 )) s)"; }
# run NAME CMD...: CMD's stdout+stderr in $OUT/NAME.txt, its status in $OUT/NAME.rc.
run() {
    local name=$1; shift
    "$@" >"$OUT/$name.txt" 2>&1
    echo $? >"$OUT/$name.rc"
    sed "s/^/  $name| /" "$OUT/$name.txt" | grep -v '^  [^|]*| EAL: \|TELEMETRY' | tail -n 40
}
# The two Intel 82576 NICs (8086:10c9), in address order: 00:04.0 and
# 00:06.0 on x86_64's q35, 01:00.0 and 02:00.0 behind arm64's root ports.
mapfile -t nics < <(for d in /sys/bus/pci/devices/*; do
    [ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x8086:0x10c9 ] && basename "$d"
done | sort)
tx_pci=${nics[0]:-none} rx_pci=${nics[1]:-none}
echo "$tx_pci $rx_pci" >"$OUT/nics"
# The kernel's name for a NIC: the first boot's udev names them (enp0s4),
# and after --undo the kernel's own names come back (eth0): by address.
ifname() { find "/sys/bus/pci/devices/$1/net" -mindepth 1 -maxdepth 1 -printf "%f\n" 2>/dev/null | head -n 1; }
setup=/work/deploy/setup.sh
hp_mib=768
snapshot() { # the state the set-up script changes
    for d in "$tx_pci" "$rx_pci"; do
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
} >"$OUT/guest.txt" 2>&1
cat "$OUT/guest.txt"
cat "/sys/class/net/$(ifname "$rx_pci")/address" >"$OUT/rx-mac"
rx_mac=$(cat "$OUT/rx-mac")

# ladder CASE: drop on the second NIC, blast on the first, each with its
# own -a from the EAL arguments the set-up script wrote.
ladder() {
    local case=$1 eal tx_a rx_a
    eal=$(cat /etc/blastdrop/eal-args)
    read -r _ tx_a _ rx_a <<<"$eal"
    echo "$eal" >"$OUT/$case-eal-args"
    local listen=127.0.0.1:7700
    # Paced steps at a rate the emulated path carries, on 1 and 2 queues
    # with 4 flows, so drop's RSS spreads them over both RX queues.
    stage "$case: drop on $rx_a (2 RX queues), blast on $tx_a"
    drop --port "$rx_a" --queues 2 --listen "$listen" --duration 600 --json "$OUT/$case-drop.json" \
        -- -a "$rx_a" --in-memory >"$OUT/$case-drop.txt" 2>&1 &
    local drop_pid=$!
    for _ in $(seq 1 120); do grep -q "control on" "$OUT/$case-drop.txt" 2>/dev/null && break; sleep 0.5; done
    stage "$case: paced ladder, queues 1,2 at 20k frames/s"
    run "$case-paced" timeout 240 blast --port "$tx_a" --peer "$listen" --queues 1,2 --rx-queues 2 --flows 4 \
        --rate 20k --duration 3 --warmup 1 --dst-mac "$rx_mac" --json "$OUT/$case-paced.json" \
        -- -a "$tx_a" --in-memory
    if [ "$case" = vfio ]; then
        # Unpaced, the emulator drops frames no counter sees: that loss
        # must come out as a limit with its evidence, never `none`.
        stage "$case: unpaced steps, 1 and 2 queues"
        run "$case-unpaced" timeout 180 blast --port "$tx_a" --peer "$listen" --queues 1,2 --rx-queues 2 --flows 4 \
            --duration 3 --warmup 1 --dst-mac "$rx_mac" --json "$OUT/$case-unpaced.json" \
            -- -a "$tx_a" --in-memory
        # drop killed with -9 mid-ladder, 3 rounds: blast must say the
        # receiver is gone, and the next drop must open the NIC again.
        local round blast_pid waited
        for round in 1 2 3; do
            if [ "$round" -gt 1 ]; then
                drop --port "$rx_a" --queues 2 --listen "$listen" --duration 600 \
                    -- -a "$rx_a" --in-memory >"$OUT/$case-drop-$round.txt" 2>&1 &
                drop_pid=$!
                for _ in $(seq 1 120); do grep -q "control on" "$OUT/$case-drop-$round.txt" 2>/dev/null && break; sleep 0.5; done
            fi
            stage "$case: drop killed with -9 in a ladder, round $round"
            blast --port "$tx_a" --peer "$listen" --queues 1,2 --repeat 3 --rx-queues 2 --flows 4 --rate 20k --duration 3 --warmup 1 \
                --dst-mac "$rx_mac" --json "$OUT/$case-killed-$round.json" -- -a "$tx_a" --in-memory >"$OUT/$case-killed-$round.txt" 2>&1 &
            blast_pid=$!
            for _ in $(seq 1 240); do grep -q "step 1 (" "$OUT/$case-killed-$round.txt" 2>/dev/null && break; sleep 0.5; done
            # Each round kills it at another point of the next step.
            sleep "$round"
            kill -9 "$drop_pid" 2>/dev/null
            wait "$drop_pid" 2>/dev/null
            waited=0
            while kill -0 "$blast_pid" 2>/dev/null && [ "$waited" -lt 120 ]; do sleep 1; waited=$((waited + 1)); done
            kill -9 "$blast_pid" 2>/dev/null
            wait "$blast_pid"
            echo $? >"$OUT/$case-killed-$round.rc"
            sed "s/^/  killed-$round| /" "$OUT/$case-killed-$round.txt" | grep -v 'EAL:' | grep -i 'gone\|error\|panick' | tail -n 5
        done
    else
        kill -INT "$drop_pid" 2>/dev/null
        local waited=0
        while kill -0 "$drop_pid" 2>/dev/null && [ "$waited" -lt 30 ]; do sleep 1; waited=$((waited + 1)); done
        kill -9 "$drop_pid" 2>/dev/null
        wait "$drop_pid"
        echo $? >"$OUT/$case-drop.rc"
    fi
}

for case in vfio uio; do
    driver=vfio-pci
    [ "$case" = uio ] && driver=uio_pci_generic
    tx_if=$(ifname "$tx_pci") rx_if=$(ifname "$rx_pci")
    stage "$case: deploy/setup.sh --driver $driver --iface $tx_if --iface $rx_if (first run)"
    run "$case-setup-1" timeout 120 bash "$setup" --no-build --iface "$tx_if" --iface "$rx_if" --hugepage-mib "$hp_mib" --driver "$driver"
    snapshot >"$OUT/$case-state-1"
    stage "$case: deploy/setup.sh again (must change nothing)"
    run "$case-setup-2" timeout 120 bash "$setup" --no-build --iface "$tx_if" --iface "$rx_if" --hugepage-mib "$hp_mib" --driver "$driver"
    snapshot >"$OUT/$case-state-2"
    ladder "$case"
    stage "$case: deploy/setup.sh --undo"
    run "$case-undo" timeout 60 bash "$setup" --undo
    sleep 1
    snapshot >"$OUT/$case-state-undo"
    ip -br link >"$OUT/$case-links-undo"
done
stage "done"
