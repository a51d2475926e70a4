//! Which queue sends which flow.
//!
//! A flow is one UDP source port; a stream is one (queue, flow) pair with its
//! own sequence numbers. With at least as many flows as queues, flow `f` goes
//! to queue `f % queues` and stream ids equal flow indexes. With fewer flows
//! than queues, queue `q` sends flow `q % flows`, and each queue is its own
//! stream. Either way every stream is owned by exactly one queue, so its
//! sequence numbers need no sharing between cores.

use crate::LayoutError;

/// One stream: the queue that sends it and the UDP source port it uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stream {
    pub id: u16,
    pub queue: u16,
    pub src_port: u16,
}

/// The assignment of flows to queues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowPlan {
    pub queues: u16,
    pub flows: u32,
    pub base_port: u16,
    /// The first stream id (0, or a group member's share of the ids).
    pub first_stream: u16,
}

impl FlowPlan {
    /// Checks that the plan is possible: flows at least 1, ports in range,
    /// stream ids within 16 bits.
    pub fn new(queues: u16, flows: u32, base_port: u16) -> Result<FlowPlan, LayoutError> {
        if queues == 0 {
            return Err(LayoutError::NoQueues);
        }
        if flows == 0 {
            return Err(LayoutError::NoFlows);
        }
        let last = u32::from(base_port) + flows - 1;
        if last > u32::from(u16::MAX) {
            return Err(LayoutError::PortsRunOut { flows, base_port });
        }
        Ok(FlowPlan { queues, flows, base_port, first_stream: 0 })
    }

    /// Number of streams: one per flow, or one per queue when flows are fewer.
    pub fn stream_count(&self) -> u32 {
        self.flows.max(u32::from(self.queues))
    }

    pub fn stream(&self, id: u32) -> Stream {
        let flow = id % self.flows;
        Stream { id: self.first_stream + id as u16, queue: (id % u32::from(self.queues)) as u16, src_port: self.base_port + flow as u16 }
    }

    /// The streams queue `q` sends, in round-robin order.
    pub fn streams_for_queue(&self, q: u16) -> Vec<Stream> {
        (u32::from(q)..self.stream_count()).step_by(usize::from(self.queues)).map(|id| self.stream(id)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_flows_than_queues_split_flows() {
        let plan = FlowPlan::new(2, 5, 1000).unwrap();
        let q0: Vec<u16> = plan.streams_for_queue(0).iter().map(|s| s.src_port).collect();
        let q1: Vec<u16> = plan.streams_for_queue(1).iter().map(|s| s.src_port).collect();
        assert_eq!(q0, [1000, 1002, 1004]);
        assert_eq!(q1, [1001, 1003]);
        assert_eq!(plan.stream_count(), 5);
    }

    #[test]
    fn fewer_flows_than_queues_share_ports_not_streams() {
        let plan = FlowPlan::new(4, 2, 1000).unwrap();
        let all: Vec<Stream> = (0..4).flat_map(|q| plan.streams_for_queue(q)).collect();
        assert_eq!(all.len(), 4);
        assert_eq!(all.iter().map(|s| s.src_port).collect::<Vec<_>>(), [1000, 1001, 1000, 1001]);
        let mut ids: Vec<u16> = all.iter().map(|s| s.id).collect();
        ids.sort();
        assert_eq!(ids, [0, 1, 2, 3]);
    }

    #[test]
    fn every_stream_has_one_queue() {
        let plan = FlowPlan::new(3, 10, 1).unwrap();
        let mut seen = [0; 10];
        for q in 0..3 {
            for s in plan.streams_for_queue(q) {
                assert_eq!(s.queue, q);
                seen[usize::from(s.id)] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
    }

    #[test]
    fn bad_plans_are_refused() {
        assert_eq!(FlowPlan::new(1, 0, 1000).unwrap_err(), LayoutError::NoFlows);
        assert!(FlowPlan::new(1, 100, 65500).unwrap_err().to_string().contains("65535"));
        assert_eq!(FlowPlan::new(0, 1, 1000).unwrap_err(), LayoutError::NoQueues);
        assert!(FlowPlan::new(1, 36, 65500).is_ok());
    }
}
