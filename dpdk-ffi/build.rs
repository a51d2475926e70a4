//! Finds the installed DPDK with pkg-config, refuses lines we do not
//! support, generates bindings into OUT_DIR and compiles the C shim with
//! exactly DPDK's own compiler flags.

use std::env;
use std::path::PathBuf;

/// The LTS lines blastdrop is built and tested against.
const SUPPORTED_LINES: &[(u32, u32)] = &[(22, 11), (23, 11), (24, 11), (25, 11)];

fn main() {
    println!("cargo:rerun-if-changed=shim/shim.h");
    println!("cargo:rerun-if-changed=shim/shim.c");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    for (y, m) in SUPPORTED_LINES {
        println!("cargo::rustc-check-cfg=cfg(dpdk_{y}_{m})");
    }
    let version = supported_dpdk();

    // Exactly `pkg-config --cflags libdpdk`: it carries `-include rte_config.h`
    // and DPDK's own -march; adding ours would break inlining or fail at run time.
    let cflags = pkg_config_output(&["--cflags", "libdpdk"]);
    let cflag_list: Vec<String> = cflags.split_whitespace().map(str::to_owned).collect();
    println!("cargo:cflags={cflags}");
    println!("cargo:libs={}", pkg_config_output(&["--libs", "libdpdk"]));

    compile_shim(&cflag_list);
    link_dpdk();
    generate_bindings(&cflag_list, &version);
}

/// The DPDK pkg-config finds, refused unless it is a supported LTS line;
/// its line becomes a cfg (`dpdk_24_11`). Returns its version.
fn supported_dpdk() -> String {
    let lib = pkg_config::Config::new().cargo_metadata(false).probe("libdpdk").unwrap_or_else(|e| {
        fail(&format!(
            "DPDK not found by pkg-config ({}). Install it: apt-get install dpdk-dev libdpdk-dev pkg-config \
                 (or set PKG_CONFIG_PATH to a DPDK 22.11, 23.11, 24.11 or 25.11 build)",
            first_line(&e.to_string())
        ))
    });
    let (year, month) =
        parse_line(&lib.version).unwrap_or_else(|| fail(&format!("cannot read DPDK version {:?} from pkg-config", lib.version)));
    if !SUPPORTED_LINES.contains(&(year, month)) {
        fail(&format!(
            "DPDK {} found, but blastdrop supports the 22.11, 23.11, 24.11 and 25.11 LTS lines only; \
             install one of them and point PKG_CONFIG_PATH at it",
            lib.version
        ));
    }
    println!("cargo:rustc-cfg=dpdk_{year}_{month}");
    println!("cargo:version={}", lib.version);
    println!("cargo:line={year}.{month}");
    println!("cargo:rustc-env=DPDK_PKG_VERSION={}", lib.version);
    lib.version
}

/// The C shim, built with DPDK's own flags.
fn compile_shim(cflag_list: &[String]) {
    let mut shim = cc::Build::new();
    shim.file("shim/shim.c").warnings(true).flag_if_supported("-Wno-unused-parameter");
    for f in cflag_list {
        shim.flag(f);
    }
    // The shim's inline DPDK functions read EAL's thread-local lcore id (the
    // mempool cache lookup does, per bulk get). Built -fPIC, as cc does,
    // every read is a call to __tls_get_addr.
    // The shim only ever links into executables that load librte_eal at
    // start, where the initial-exec model is valid and costs one load.
    shim.flag("-ftls-model=initial-exec");
    shim.compile("blastdrop_shim");
}

/// DPDK linked shared: EAL then loads the PMDs from its plugin directory
/// (static drivers beside a shared EAL would register twice).
fn link_dpdk() {
    let libs = pkg_config_output(&["--libs", "libdpdk"]);
    for tok in libs.split_whitespace() {
        if let Some(dir) = tok.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
        } else if let Some(name) = tok.strip_prefix("-l") {
            println!("cargo:rustc-link-lib=dylib={name}");
        }
    }
}

/// Bindings to what the crate calls (the shim's functions, EAL, ethdev,
/// mempool), into OUT_DIR/bindings.rs.
fn generate_bindings(cflag_list: &[String], version: &str) {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let bindings = bindgen::Builder::default()
        .header("shim/shim.h")
        .clang_args(cflag_list)
        .allowlist_function("bd_.*")
        .allowlist_var("bd_.*")
        .allowlist_type("bd_mbuf_offset")
        .constified_enum_module("bd_mbuf_offset")
        .allowlist_function("rte_eal_(init|cleanup|remote_launch|wait_lcore|mp_wait_lcore|process_type|has_hugepages)")
        .allowlist_function("rte_lcore_(count|is_enabled|to_socket_id|to_cpu_id)")
        .allowlist_function("rte_get_(next_lcore|main_lcore|tsc_hz)")
        .allowlist_function("rte_socket_id")
        .allowlist_function("rte_strerror")
        .allowlist_function("rte_version")
        .allowlist_function("rte_eth_(dev_configure|dev_info_get|dev_start|dev_stop|dev_close|dev_count_avail|dev_socket_id|dev_get_port_by_name|dev_get_name_by_port|dev_is_valid_port|dev_set_mtu|dev_get_mtu|dev_adjust_nb_rx_tx_desc|rx_queue_setup|tx_queue_setup|link_get_nowait|stats_get|stats_reset|xstats_get_names|xstats_get|xstats_get_by_id|xstats_get_id_by_name|xstats_get_names_by_id|macaddr_get|find_next_owned_by|promiscuous_enable|dev_rss_hash_conf_get)")
        .allowlist_function("rte_eth_link_to_str")
        .allowlist_function("rte_pktmbuf_(pool_create|free_bulk)")
        .allowlist_function("rte_mempool_(obj_iter|free|avail_count|in_use_count)")
        .allowlist_function("rte_dev_probe")
        .allowlist_type("rte_eth_conf|rte_eth_dev_info|rte_eth_stats|rte_eth_link|rte_eth_xstat|rte_eth_xstat_name|rte_ether_addr")
        .allowlist_var("RTE_ETH_.*|RTE_MAX_LCORE|RTE_MAX_ETHPORTS|RTE_PKTMBUF_HEADROOM|RTE_MBUF_DEFAULT_BUF_SIZE|RTE_ETHER_.*|RTE_ETH_NAME_MAX_LEN|RTE_CACHE_LINE_SIZE|RTE_ETH_XSTATS_NAME_SIZE|SOCKET_ID_ANY|RTE_MEMPOOL_CACHE_MAX_SIZE|RTE_EAL_PMD_PATH")
        // struct rte_mbuf's field layout moves between LTS lines: keep it a
        // sized blob and go through the shim.
        .opaque_type("rte_mbuf")
        .opaque_type("rte_mempool")
        // rte_arp_ipv4 is packed and aligned at once (E0588).
        .opaque_type("rte_arp_ipv4")
        .derive_default(true)
        .layout_tests(false)
        .generate_comments(false)
        .prepend_enum_name(false)
        .generate()
        .unwrap_or_else(|e| fail(&format!("bindgen failed over DPDK {version} headers: {e}; is libclang-dev installed?")));
    bindings.write_to_file(out.join("bindings.rs")).expect("write bindings.rs");
}

fn parse_line(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split('.');
    let year = parts.next()?.trim().parse().ok()?;
    let month = parts.next()?.trim().parse().ok()?;
    Some((year, month))
}

fn pkg_config_output(args: &[&str]) -> String {
    let pc = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into());
    let out = std::process::Command::new(&pc)
        .args(args)
        .output()
        .unwrap_or_else(|e| fail(&format!("cannot run {pc}: {e}; apt-get install pkg-config")));
    if !out.status.success() {
        fail(&format!("{pc} {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()));
    }
    String::from_utf8(out.stdout).expect("pkg-config output is UTF-8").trim().to_owned()
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

fn fail(msg: &str) -> ! {
    // cargo shows a build script's stderr in full; one clear line is enough.
    eprintln!("error: dpdk-ffi: {msg}");
    std::process::exit(1);
}
