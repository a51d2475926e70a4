//! Queues spread over several ports, round robin: with two ports, queues
//! 0, 2, 4 ... run on port 0 and queues 1, 3, 5 ... on port 1, so every
//! step of a queue ladder loads the ports as evenly as its count allows
//! (one interface per network card is how an EC2 48xlarge reaches 600G).

/// `queues` global queues over `ports` ports (at least one), round robin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spread {
    pub queues: u16,
    pub ports: u16,
}

impl Spread {
    pub fn new(queues: u16, ports: u16) -> Spread {
        Spread { queues, ports: ports.max(1) }
    }

    /// (port, the port's own queue id) of global queue `queue`.
    pub fn port_of(&self, queue: u16) -> (u16, u16) {
        port_of(queue, self.ports)
    }

    /// How many of the queues run on `port`.
    pub fn queues_on(&self, port: u16) -> u16 {
        share(self.queues, self.ports, port)
    }

    /// The global queue id of `port`'s queue `local`.
    pub fn global_queue(&self, port: u16, local: u16) -> u16 {
        global_queue(port, local, self.ports)
    }

    /// The global queues on `port`, in order.
    pub fn queues_of(&self, port: u16) -> impl Iterator<Item = u16> + '_ {
        (0..self.queues_on(port)).map(move |local| self.global_queue(port, local))
    }
}

/// Where global queue `queue` runs: (port index, the port's own queue id).
pub fn port_of(queue: u16, ports: u16) -> (u16, u16) {
    let ports = ports.max(1);
    (queue % ports, queue / ports)
}

/// The global queue id of `port`'s queue `local`.
pub fn global_queue(port: u16, local: u16, ports: u16) -> u16 {
    local * ports.max(1) + port
}

/// How many of `queues` run on `port`.
pub fn share(queues: u16, ports: u16, port: u16) -> u16 {
    let ports = ports.max(1);
    queues / ports + u16::from(port < queues % ports)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_port_is_the_identity() {
        for q in 0..8 {
            assert_eq!(port_of(q, 1), (0, q));
            assert_eq!(global_queue(0, q, 1), q);
        }
        assert_eq!(share(5, 1, 0), 5);
    }

    #[test]
    fn two_ports_alternate() {
        assert_eq!(port_of(0, 2), (0, 0));
        assert_eq!(port_of(1, 2), (1, 0));
        assert_eq!(port_of(2, 2), (0, 1));
        assert_eq!(port_of(5, 2), (1, 2));
        assert_eq!(global_queue(1, 2, 2), 5);
    }

    #[test]
    fn shares_add_up_and_differ_by_at_most_one() {
        for ports in 1..5u16 {
            for queues in 0..40u16 {
                let s: Vec<u16> = (0..ports).map(|p| share(queues, ports, p)).collect();
                assert_eq!(s.iter().sum::<u16>(), queues);
                assert!(s.iter().max().unwrap() - s.iter().min().unwrap() <= 1);
                // and they agree with port_of
                for (p, &n) in s.iter().enumerate() {
                    assert_eq!((0..queues).filter(|&q| port_of(q, ports).0 == p as u16).count(), usize::from(n));
                }
            }
        }
    }

    #[test]
    fn one_queue_on_two_ports_leaves_the_second_idle() {
        assert_eq!(share(1, 2, 0), 1);
        assert_eq!(share(1, 2, 1), 0);
        let s = Spread::new(5, 2);
        assert_eq!(s.queues_of(0).collect::<Vec<_>>(), [0, 2, 4]);
        assert_eq!(s.queues_of(1).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(Spread::new(3, 0).port_of(2), (0, 2));
    }
}
