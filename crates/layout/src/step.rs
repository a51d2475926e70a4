use crate::{FlowPlan, Spread, Stream};

/// Why a step cannot be laid out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("queues must be at least 1")]
    NoQueues,
    #[error("flows must be at least 1 (one UDP source port per flow)")]
    NoFlows,
    #[error("{flows} flows from source port {base_port} run past port 65535")]
    PortsRunOut { flows: u32, base_port: u16 },
    #[error("{streams} streams, but this sender owns {room} stream ids")]
    TooManyStreams { streams: u32, room: u32 },
}

/// One step's layout: `queues` global queues spread round robin over
/// `ports`, the flow plan, and the step's frame count and total rate.
#[derive(Debug, Clone, PartialEq)]
pub struct StepLayout {
    pub spread: Spread,
    pub flows: FlowPlan,
    /// Frames for the whole step (all queues), when counted.
    pub count: Option<u64>,
    /// Frames per second for the whole step, when paced.
    pub rate: Option<f64>,
}

/// What one global queue does in a step.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueSlot {
    pub queue: u16,
    pub port: u16,
    /// The queue's id on its own port.
    pub local: u16,
    pub streams: Vec<Stream>,
    pub quota: Option<u64>,
    pub rate: Option<f64>,
}

impl StepLayout {
    /// A step of `queues` queues over `ports` ports (at least one), sending
    /// `flows` UDP source ports from `base_port` up.
    pub fn new(queues: u16, ports: u16, flows: u32, base_port: u16) -> Result<StepLayout, LayoutError> {
        let flows = FlowPlan::new(queues, flows, base_port)?;
        Ok(StepLayout { spread: Spread::new(queues, ports), flows, count: None, rate: None })
    }

    /// Stream ids from `first`, at most `room` of them (a group member's share).
    pub fn with_streams_from(mut self, first: u16, room: u32) -> Result<StepLayout, LayoutError> {
        let streams = self.flows.stream_count();
        if streams > room {
            return Err(LayoutError::TooManyStreams { streams, room });
        }
        self.flows.first_stream = first;
        Ok(self)
    }

    pub fn with_count(mut self, count: Option<u64>) -> StepLayout {
        self.count = count;
        self
    }

    pub fn with_rate(mut self, rate: Option<f64>) -> StepLayout {
        self.rate = rate;
        self
    }

    pub fn queues(&self) -> u16 {
        self.spread.queues
    }

    pub fn ports(&self) -> u16 {
        self.spread.ports
    }

    /// (port, the port's own queue id) of global queue `queue`.
    pub fn port_of(&self, queue: u16) -> (u16, u16) {
        self.spread.port_of(queue)
    }

    /// How many of the step's queues run on `port`.
    pub fn queues_on(&self, port: u16) -> u16 {
        self.spread.queues_on(port)
    }

    /// The streams queue `queue` sends, in round-robin order.
    pub fn streams(&self, queue: u16) -> Vec<Stream> {
        self.flows.streams_for_queue(queue)
    }

    /// Queue `queue`'s share of the frame count: the remainder goes to the first queues.
    pub fn quota(&self, queue: u16) -> Option<u64> {
        self.count.map(|c| split_count(c, self.queues(), queue))
    }

    /// Each queue's rate: the step's rate split evenly.
    pub fn queue_rate(&self) -> Option<f64> {
        self.rate.map(|r| r / f64::from(self.queues()))
    }

    /// `port`'s share of the step's rate (its queues' rates summed).
    pub fn port_rate(&self, port: u16) -> Option<f64> {
        self.queue_rate().map(|r| r * f64::from(self.queues_on(port)))
    }

    /// Every queue of the step, in order.
    pub fn slots(&self) -> impl Iterator<Item = QueueSlot> + '_ {
        (0..self.queues()).map(|queue| {
            let (port, local) = self.port_of(queue);
            QueueSlot { queue, port, local, streams: self.streams(queue), quota: self.quota(queue), rate: self.queue_rate() }
        })
    }
}

fn split_count(total: u64, queues: u16, queue: u16) -> u64 {
    let q = u64::from(queues);
    total / q + u64::from(u64::from(queue) < total % q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_split_with_remainder_first() {
        let l = StepLayout::new(3, 1, 3, 1000).unwrap().with_count(Some(10));
        let split: Vec<u64> = (0..3).map(|q| l.quota(q).unwrap()).collect();
        assert_eq!(split, [4, 3, 3]);
        let l = StepLayout::new(4, 1, 4, 1000).unwrap().with_count(Some(1));
        assert_eq!(l.quota(3), Some(0));
        assert_eq!(l.with_count(None).quota(0), None);
    }

    #[test]
    fn rates_split_evenly_and_sum_per_port() {
        let l = StepLayout::new(4, 1, 4, 1000).unwrap().with_rate(Some(10.0));
        assert_eq!(l.queue_rate(), Some(2.5));
        // Three queues over two ports: two on port 0, one on port 1.
        let l = StepLayout::new(3, 2, 3, 1000).unwrap().with_rate(Some(3e6));
        assert_eq!((l.port_rate(0), l.port_rate(1)), (Some(2e6), Some(1e6)));
    }

    #[test]
    fn slots_agree_with_ports_and_flows() {
        let l = StepLayout::new(5, 2, 7, 2000).unwrap().with_count(Some(11)).with_rate(Some(5.0));
        let slots: Vec<QueueSlot> = l.slots().collect();
        assert_eq!(slots.len(), 5);
        assert_eq!(slots.iter().map(|s| (s.port, s.local)).collect::<Vec<_>>(), [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]);
        assert_eq!(slots.iter().map(|s| s.quota.unwrap()).sum::<u64>(), 11);
        assert_eq!(slots.iter().map(|s| s.streams.len()).sum::<usize>(), 7);
        assert!(slots.iter().all(|s| s.rate == Some(1.0) && s.streams.iter().all(|st| st.queue == s.queue)));
        assert_eq!((0..2).map(|p| l.queues_on(p)).collect::<Vec<_>>(), [3, 2]);
    }

    #[test]
    fn a_group_member_numbers_its_streams_from_its_share() {
        let l = StepLayout::new(2, 1, 3, 1000).unwrap().with_streams_from(1365, 1365).unwrap();
        let ids: Vec<u16> = (0..2).flat_map(|q| l.streams(q)).map(|s| s.id).collect();
        assert_eq!(ids, [1365, 1367, 1366]);
        let e = StepLayout::new(1, 1, 2000, 1000).unwrap().with_streams_from(0, 1365).unwrap_err();
        assert_eq!(e, LayoutError::TooManyStreams { streams: 2000, room: 1365 });
    }

    #[test]
    fn zero_ports_means_one() {
        let l = StepLayout::new(2, 0, 2, 1000).unwrap();
        assert_eq!(l.ports(), 1);
        assert_eq!(l.port_of(1), (0, 1));
    }
}
