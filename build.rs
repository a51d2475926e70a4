//! Builds the plain C reference sender (examples/ref_sender.c and its send
//! loop, examples/ref_lane.c) into `target/<profile>/blast-ref`, with exactly
//! the compiler and linker flags dpdk-ffi found for DPDK, so both senders run
//! against the same DPDK; and the same send loop into a static library
//! linked into blast, whose C lanes (`--cross-check`) run it.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    for f in ["examples/ref_sender.c", "examples/ref_lane.c", "examples/ref_lane.h"] {
        println!("cargo:rerun-if-changed={f}");
    }
    let cflags = env::var("DEP_DPDK_CFLAGS").expect("dpdk-ffi exports DPDK's cflags");
    let libs = env::var("DEP_DPDK_LIBS").expect("dpdk-ffi exports DPDK's libs");
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    // OUT_DIR is target/<profile>/build/<pkg>-<hash>/out: the binaries live three levels up.
    let bin_dir = out_dir.ancestors().nth(3).expect("cargo's target layout").to_path_buf();
    let target = bin_dir.join("blast-ref");
    // The target's C compiler as the cc crate finds it (CC_<target>, CC, then
    // the target's default: aarch64-linux-gnu-gcc when cross-building), not
    // the host's `cc`, which rejects DPDK's arm64 flags (-moutline-atomics).
    // Only its path: the flags are DPDK's alone.
    let cc = cc::Build::new().cargo_metadata(false).get_compiler().path().to_path_buf();
    let status = Command::new(&cc)
        .args(["-O3", "-g", "-Wall", "-o"])
        .arg(&target)
        .args(["examples/ref_sender.c", "examples/ref_lane.c"])
        .args(cflags.split_whitespace())
        .args(libs.split_whitespace())
        .status()
        .unwrap_or_else(|e| panic!("cannot run {} to build the C reference sender: {e}", cc.display()));
    if !status.success() {
        panic!("building examples/ref_sender.c failed with {status}");
    }
    println!("cargo:rustc-env=BLAST_REF={}", target.display());

    // The same loop for blast's C lanes: -O3 as blast-ref has it, DPDK's
    // flags alone otherwise (the shim's reasoning: dpdk-ffi/build.rs).
    let mut lane = cc::Build::new();
    lane.file("examples/ref_lane.c").opt_level(3).debug(false).force_frame_pointer(false).warnings(true);
    for f in cflags.split_whitespace() {
        lane.flag(f);
    }
    lane.flag("-ftls-model=initial-exec");
    lane.compile("blastdrop_ref_lane");
}
