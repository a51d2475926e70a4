//! One step of the sender: its layout, its frame templates, and its run
//! through the warm-up, the drain and the measured trial.

use std::sync::Arc;

use layout::StepLayout;
use wire::FrameSpec;

use super::outcome::StepOutcome;
use super::window::WindowHooks;
use super::{Sender, StepParams};
use crate::error::Error;
use crate::signals;
use crate::tx;

impl Sender {
    fn write_templates(&mut self, layout: &StepLayout, size: u32, mix: Option<&wire::SizeMix>) -> Result<(), Error> {
        let key = (size, layout.flows.flows, layout.queues(), mix.map(|m| m.label()));
        if self.templates == Some(key.clone()) {
            return Ok(());
        }
        self.mixes = vec![None; self.pools.len()];
        for slot in layout.slots() {
            let (q, first) = (slot.queue, slot.streams[0]);
            let side = &self.sides[usize::from(slot.port)];
            let a = &side.addressing;
            let spec = FrameSpec {
                src_mac: side.src_mac,
                dst_mac: a.dst_mac,
                src_ip: a.src_ip,
                dst_ip: a.dst_ip,
                src_port: first.src_port,
                dst_port: a.dst_port,
                frame_size: size as usize,
                ttl: 64,
                run_id: self.run_id,
            };
            tx::write_templates(&self.pools[usize::from(q)], &spec)?;
            if let Some(m) = mix {
                self.mixes[usize::from(q)] = Some(Arc::new(tx::MixFrames::new(m, &spec)?));
            }
        }
        self.templates = Some(key);
        Ok(())
    }

    /// Runs one step. Without a window: sends until the count or the
    /// duration. With one: sends through the warm-up, pauses for the drain,
    /// has the receiver open its window, sends for the duration as one
    /// trial, drains, and has the receiver close its window. Every frame of
    /// the trial is thus inside the receiver's window and nothing else is,
    /// so the two ends' counts compare exactly (RFC 2544's trial).
    pub fn run_step(&mut self, p: &StepParams, hooks: &mut dyn WindowHooks) -> Result<StepOutcome, Error> {
        if p.c_lanes {
            self.c_lanes_can(p)?;
        }
        let plan = self.layout(p)?;
        self.set_queues(p.queues)?;
        if p.replay.is_none() && self.sockets.is_none() {
            self.write_templates(&plan, p.size, p.mix.as_ref())?;
        }
        if !p.window {
            let phase = self.run_phase(&plan, p, p.duration, p.count, hooks)?;
            std::thread::sleep(self.cfg.drain);
            return Ok(phase.into_outcome(None, None));
        }
        let mut warmup_sent = None;
        if !p.warmup.is_zero() {
            let warm = self.run_phase(&plan, p, Some(p.warmup), None, hooks)?;
            warmup_sent = Some(warm.sent());
            std::thread::sleep(self.cfg.drain);
            if warm.failure.is_some() || warm.interrupted {
                return Ok(StepOutcome { warmup_sent, ..warm.into_outcome(None, None) });
            }
        }
        let streams_at_start = self.stream_edge(&plan);
        if let Err(e) = hooks.start(streams_at_start.as_ref()) {
            return Ok(StepOutcome {
                lanes: Vec::new(),
                window: None,
                failure: Some(e),
                interrupted: signals::interrupted(),
                seconds: 0.0,
                warmup_sent,
                tx_undrained: Vec::new(),
            });
        }
        let before = self.read_counters();
        let kernel_before = self.sockets.as_ref().map(|s| s.kernel_reading(p.queues));
        let cpu_before = crate::host::CpuTimes::now();
        // A count ends a windowed trial too: a back-to-back burst is one.
        let trial = self.run_phase(&plan, p, p.duration, p.count, hooks)?;
        let host_steal_pct = crate::host::CpuTimes::steal_pct(cpu_before, crate::host::CpuTimes::now());
        // Frames accepted but still in a ring are lost if the window closes now.
        std::thread::sleep(self.cfg.drain);
        let after = self.read_counters();
        let mut window = self.trial_window(&trial, &before, &after);
        if let (Some(s), Some(a)) = (&self.sockets, kernel_before) {
            window.udp = Some(s.kernel_window(&a, &s.kernel_reading(p.queues), window.total.packets));
        }
        window.all_probed = p.replay.is_none();
        (window.streams_at_start, window.streams_at_end) = (streams_at_start, self.stream_edge(&plan));
        window.host_steal_pct = host_steal_pct;
        let closed = if trial.interrupted { Ok(()) } else { hooks.end(&window) };
        Ok(StepOutcome { warmup_sent, ..trial.into_outcome(Some(window), closed.err()) })
    }

    /// Refuses a step the C lanes cannot send.
    fn c_lanes_can(&self, p: &StepParams) -> Result<(), Error> {
        let what = if p.rate.is_some() {
            "a paced rate"
        } else if p.mix.is_some() {
            "a size mix"
        } else if p.reflect {
            "probes to time (--reflect)"
        } else if p.replay.is_some() {
            "a capture"
        } else if self.sockets.is_some() {
            "on kernel sockets"
        } else {
            return Ok(());
        };
        Err(Error::CLanesCannot { what })
    }

    /// Where this step's streams stand now (None: more than an edge lists).
    fn stream_edge(&self, plan: &StepLayout) -> Option<seqtrack::StreamEdge> {
        let (first, n) = (plan.flows.first_stream, plan.flows.stream_count() as usize);
        let seqs = self.seqs.get(usize::from(first)..usize::from(first) + n).filter(|_| n <= seqtrack::MAX_EDGE_STREAMS)?;
        Some(seqtrack::StreamEdge { run: self.run_id, first, seqs: seqs.to_vec() })
    }

    /// The step's layout over this sender's ports.
    pub fn layout(&self, p: &StepParams) -> Result<StepLayout, Error> {
        let base = self.cfg.addressing[0].src_port;
        let mut layout = StepLayout::new(p.queues, self.sides.len() as u16, p.flows, base).map_err(Error::Layout)?;
        if let Some((first, room)) = self.own_streams {
            layout = layout.with_streams_from(first, room).map_err(Error::Layout)?;
        }
        Ok(layout.with_rate(p.rate))
    }

    /// This sender numbers its streams from `first`, at most `room` of them
    /// (its share of a group's stream ids, so the receiver tells the members apart).
    pub fn own_streams(&mut self, first: u16, room: u32) {
        self.own_streams = Some((first, room));
    }
}
