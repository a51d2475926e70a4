//! Queues spread over several ports, round robin: with two ports, queues
//! 0, 2, 4 ... run on port 0 and queues 1, 3, 5 ... on port 1, so every
//! step of a queue ladder loads the ports as evenly as its count allows
//! (one interface per network card is how an EC2 48xlarge reaches 600G).

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
    }
}
