//! The safe layer against the real EAL on a real virtual device (net_null).
//! The EAL starts once per process, so everything runs in one test.

use dpdk::{Eal, Error, LimitKind, Mempool, PoolSizing, Port, PortConfig};

#[test]
fn safe_layer_over_net_null() {
    let args = [
        "--no-huge",
        "-m",
        "256",
        "--no-pci",
        "--no-shconf",
        "--lcores=0@0,1@0",
        "--vdev=net_null0",
        "--log-level=lib.eal:notice",
        "--log-level=pmd.net.null:debug",
    ];
    let eal = Eal::init("dpdk-test", args).expect("EAL starts on net_null without hugepages");

    // A second start is an error value, not a crash.
    assert_eq!(Eal::init("dpdk-test", args).err(), Some(Error::EalAlreadyStarted));
    assert_eq!(eal.worker_lcores(), vec![1]);
    assert!(!eal.has_hugepages());
    assert!(dpdk::tsc_hz() > 0);
    assert!(dpdk::runtime_version().contains(dpdk::built_against().split('.').next().unwrap()));

    // Ports by id and by name; unknown ones listed with what exists.
    let mut port = Port::open("net_null0").unwrap();
    assert_eq!(port.id(), 0);
    assert_eq!(port.info().driver, "net_null");
    // What the PMDs log at probe is kept (ENA's LLQ line is read from it):
    // net_null logs its creation at debug.
    assert!(dpdk::logged().contains("net_null0"), "the log copy: {:?}", dpdk::logged());
    assert_eq!(dpdk::available_ports_with_driver(), [(0, "net_null0".to_string(), "net_null".to_string())]);
    match Port::open("7") {
        Err(Error::NoSuchPort { available, .. }) => assert_eq!(available, vec![(0, "net_null0".to_string())]),
        other => panic!("expected NoSuchPort, got {:?}", other.map(|p| p.id())),
    }
    // One handle per port: opening it again by id is refused.
    assert!(matches!(Port::open("0"), Err(Error::AlreadyOpen { .. })));

    // Limits are enforced before the device is touched.
    let good = PortConfig { rx_queues: 1, tx_queues: 1, rx_ring: 512, tx_ring: 512, max_frame: 1518, tx_fast_free: true };
    let too_many = PortConfig { rx_queues: port.info().max_rx_queues + 1, ..good.clone() };
    assert!(matches!(port.check(&too_many), Err(Error::Limit { what: LimitKind::RxQueues, .. })));
    let too_big = PortConfig { max_frame: port.info().max_frame() + 1, ..good.clone() };
    assert!(matches!(port.check(&too_big), Err(Error::Limit { what: LimitKind::FrameSize, .. })));

    let sizing = PoolSizing { ring: 512, burst: 32, cache: 64, data_room: 2176 };
    let pool = Mempool::create("bd_test_rx", &sizing, port.socket()).unwrap();
    assert_eq!(pool.mbufs(), sizing.mbufs());
    let mut visited = 0;
    pool.for_each_mbuf(|_| visited += 1);
    assert_eq!(visited, pool.mbufs());

    let (mut rxqs, mut txqs) = port.configure(&good, &[&pool]).unwrap();
    assert_eq!((rxqs.len(), txqs.len()), (1, 1));
    port.start().unwrap();
    assert!(port.link().up);
    assert_eq!(port.mac().unwrap().len(), 6);

    // Traffic through the real burst functions: net_null hands out and swallows frames.
    let tx_pool = Mempool::create("bd_test_tx", &sizing, port.socket()).unwrap();
    let mut mbufs = [std::ptr::null_mut(); 8];
    assert_eq!(unsafe { dpdk::ffi::bd_pktmbuf_alloc_bulk(tx_pool.as_ptr(), mbufs.as_mut_ptr(), 8) }, 0);
    let layout = dpdk::MbufLayout::get();
    for &m in &mbufs {
        unsafe { layout.set_len(m, 60) };
        assert_eq!(unsafe { layout.data_len(m) }, 60);
        assert_eq!(unsafe { layout.pkt_len(m) }, 60);
    }
    let mut sent = 0;
    while sent < 8 {
        sent += txqs[0].tx_burst(&mut mbufs[sent..]);
    }
    let mut got = [std::ptr::null_mut(); 32];
    let n = rxqs[0].rx_burst(&mut got);
    assert!(n > 0, "net_null always has frames to receive");
    unsafe { dpdk::ffi::rte_pktmbuf_free_bulk(got.as_mut_ptr(), n as u32) };

    let stats = port.stats().unwrap();
    assert_eq!(stats.opackets, 8);
    assert!(stats.ipackets >= n as u64);

    // Extended stats: names, ids resolved once, values read by id.
    let names = port.xstat_names().unwrap();
    assert!(names.iter().any(|n| n == "tx_good_packets"), "{names:?}");
    let ids = port.xstat_ids(&["tx_good_packets", "rx_good_packets"]).unwrap();
    let values = port.xstats(&ids).unwrap();
    assert_eq!(values[0], 8);
    assert!(values[1] >= n as u64);
    assert!(port.xstat_ids(&["no_such_counter"]).is_err());

    // Work on a worker lcore: a value comes back, a panic comes back as an error.
    let job = dpdk::launch(1, || dpdk::ffi::RTE_MAX_LCORE + unsafe { dpdk::ffi::bd_lcore_id() }).unwrap();
    assert_eq!(job.join().unwrap(), dpdk::ffi::RTE_MAX_LCORE + 1);
    let job = dpdk::launch(1, || -> u32 { panic!("worker goes wrong") }).unwrap();
    match job.join() {
        Err(Error::WorkerPanicked { lcore: 1, message }) => assert_eq!(message, "worker goes wrong"),
        other => panic!("expected WorkerPanicked, got {other:?}"),
    }
    // The lcore is usable again after a caught panic.
    assert_eq!(dpdk::launch(1, || 5).unwrap().join().unwrap(), 5);
    // The main lcore is not a worker.
    assert!(dpdk::launch(0, || 0).is_err());

    drop(rxqs);
    drop(txqs);
    drop(port);
    drop(pool);
    drop(tx_pool);
    drop(eal);
}
