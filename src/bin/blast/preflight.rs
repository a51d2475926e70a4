//! On net_ena, mistakes do not fail, they vanish: the pre-flight checks
//! each port before anything is sent.

use crate::fail::Failure;
use blastdrop::sender::{Sender, TxSide};

use crate::settings::Settings;

/// Checks each port before sending.
pub fn preflight(settings: &Settings, sender: &Sender) -> Result<(), Failure> {
    for side in sender.sides() {
        preflight_port(settings, side)?;
    }
    Ok(())
}

fn preflight_port(settings: &Settings, side: &TxSide) -> Result<(), Failure> {
    let info = &side.info;
    if info.driver != "net_ena" {
        if !side.watch.is_empty() {
            tracing::info!("{}: watching {}", info.name, side.watch.names().join(", "));
        }
        return Ok(());
    }
    let names = side.watch.names();
    let sample = side.watch.sample();
    let mut levels = limits::XstatsByKind::default();
    for (n, v) in names.iter().zip(&sample.values) {
        if limits::counter_kind(n) == limits::CounterKind::Level {
            blastdrop::say!("blast: pre-flight ({}): {n} = {v}", info.name);
            levels.insert(limits::CounterKind::Level, n.clone(), *v);
        }
    }
    let findings = ena_findings(settings, side, limits::express_mode(&levels));
    let mut errors = Vec::new();
    for f in findings {
        match f.severity {
            limits::Severity::Error => errors.push(f.message),
            limits::Severity::Warning => tracing::warn!("pre-flight ({}): {}", info.name, f.message),
            limits::Severity::Info => blastdrop::say!("blast: pre-flight ({}): {}", info.name, f.message),
        }
    }
    if !errors.is_empty() {
        return Err(Failure::usage(format!("pre-flight on net_ena port {}: {}", info.name, errors.join("; "))));
    }
    if let Some(state) = &side.ena {
        blastdrop::say!("blast: {}: {}", info.name, state.describe());
    }
    blastdrop::say!(
        "blast: pre-flight on net_ena port {} passed: own source MAC, --src-ip set, IPv4 checksum valid; watching {}",
        info.name,
        names.join(", ")
    );
    Ok(())
}

/// What limits' pre-flight finds wrong with this port's traffic.
fn ena_findings(settings: &Settings, side: &TxSide, express: Option<limits::ExpressMode>) -> Vec<limits::Finding> {
    let (info, a) = (&side.info, &side.addressing);
    let spec = wire::FrameSpec {
        src_mac: side.src_mac,
        dst_mac: a.dst_mac,
        src_ip: a.src_ip,
        dst_ip: a.dst_ip,
        src_port: a.src_port,
        dst_port: a.dst_port,
        frame_size: settings.sender.max_size as usize,
        ttl: 64,
        run_id: 0,
    };
    let mut frame = vec![0u8; spec.len_without_fcs()];
    let checksum_ok = wire::write_frame(&spec, &mut frame).is_ok()
        && wire::Ipv4Packet::new_checked(&frame[wire::ETHERNET_HEADER_LEN..]).is_some_and(|ip| ip.checksum_valid());
    limits::preflight(&limits::PreflightInput {
        driver: info.driver.clone(),
        src_mac_is_own: side.src_mac == side.own_mac,
        src_ip_is_default: a.src_ip == std::net::Ipv4Addr::new(198, 18, 0, 1),
        ipv4_checksum_ok: checksum_ok,
        queues: settings.sender.max_queues,
        flows: settings.traffic.flows_at(settings.sender.max_queues),
        frame_size: settings.sender.max_size,
        // The fastest step's rate: the one that meets the limits first.
        rate: settings.traffic.rates.iter().copied().reduce(f64::max),
        express,
    })
}
