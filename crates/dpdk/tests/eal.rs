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
    let good =
        PortConfig { rx_queues: 1, tx_queues: 1, rx_ring: 512, tx_ring: 512, max_frame: 1518, tx_fast_free: true, rx_timestamp: false };
    let too_many = PortConfig { rx_queues: port.info().max_rx_queues + 1, ..good.clone() };
    assert!(matches!(port.check(&too_many), Err(Error::Limit { what: LimitKind::RxQueues, .. })));
    let too_big = PortConfig { max_frame: port.info().max_frame() + 1, ..good.clone() };
    assert!(matches!(port.check(&too_big), Err(Error::Limit { what: LimitKind::FrameSize, .. })));

    let sizing = PoolSizing { ring: 512, burst: 32, cache: 64, data_room: 2176, held: 0, chunk: None };
    let pool = Mempool::create("bd_test_rx", &sizing, port.socket()).unwrap();
    assert_eq!(pool.mbufs(), sizing.mbufs());
    let mut visited = 0;
    pool.for_each_mbuf(|_| visited += 1);
    assert_eq!(visited, pool.mbufs());

    // net_null stamps nothing: asking it to is refused before the device is touched.
    assert!(!port.info().offers_rx_timestamp());
    let stamped = PortConfig { rx_timestamp: true, ..good.clone() };
    assert!(matches!(port.configure(&stamped, &[&pool]), Err(Error::Other(m)) if m.contains("offers no Rx timestamp offload")));

    let (mut rxqs, mut txqs) = port.configure(&good, &[&pool]).unwrap();
    assert_eq!((rxqs.len(), txqs.len()), (1, 1));
    port.start().unwrap();
    assert!(port.link().up);
    assert_eq!(port.mac().unwrap().len(), 6);

    // Traffic through the real burst functions: net_null hands out and swallows frames.
    let tx_pool = Mempool::create("bd_test_tx", &sizing, port.socket()).unwrap();
    let mut mbufs = [std::ptr::null_mut(); 8];
    assert_eq!(unsafe { dpdk_ffi::bd_pktmbuf_alloc_bulk(tx_pool.as_ptr(), mbufs.as_mut_ptr(), 8) }, 0);
    let layout = dpdk::MbufLayout::get();
    for &m in &mbufs {
        unsafe { layout.set_len(m, 60) };
        assert_eq!(unsafe { layout.data_len(m) }, 60);
        assert_eq!(unsafe { layout.pkt_len(m) }, 60);
    }
    // The Rx timestamp's dynamic field: registered here (no PMD did), read
    // only where its flag is set, as a stamping PMD leaves it.
    let ts = dpdk::RxTimestamp::register().unwrap();
    assert_eq!(dpdk::RxTimestamp::register().unwrap(), ts, "registering again finds the same field");
    let flags_of = |m: *mut dpdk::Mbuf| unsafe { (m as *mut u8).add(dpdk_ffi::bd_mbuf_offset::BD_MBUF_OL_FLAGS as usize).cast::<u64>() };
    unsafe { flags_of(mbufs[0]).write(0) };
    assert_eq!(unsafe { ts.of(mbufs[0]) }, None, "no flag: no timestamp");
    unsafe { ts.write(mbufs[0], 1_790_000_000_123_456_789) };
    assert_eq!(unsafe { ts.of(mbufs[0]) }, Some(1_790_000_000_123_456_789));
    unsafe { flags_of(mbufs[0]).write(0) };
    // Burst::alloc leaves each mbuf's reset to the pass that writes it
    // (MbufLayout::reset_to_len): that reset must be rte_pktmbuf_reset's,
    // in this DPDK line. Two mbufs, the same scribbles over every field it
    // touches (and none it does not), one reset by DPDK, one by the layer.
    let mut pair = [std::ptr::null_mut(); 2];
    assert_eq!(unsafe { dpdk_ffi::bd_pktmbuf_alloc_bulk(tx_pool.as_ptr(), pair.as_mut_ptr(), 2) }, 0);
    for &m in &pair {
        use dpdk_ffi::bd_mbuf_offset as o;
        let b = m as *mut u8;
        unsafe {
            (b.add(o::BD_MBUF_NEXT as usize) as *mut usize).write(0x1234);
            (b.add(o::BD_MBUF_TX_OFFLOAD as usize) as *mut u64).write(u64::MAX);
            (b.add(o::BD_MBUF_VLAN_TCI as usize) as *mut u16).write(0xabcd);
            (b.add(o::BD_MBUF_VLAN_TCI_OUTER as usize) as *mut u16).write(0xbcde);
            (b.add(o::BD_MBUF_NB_SEGS as usize) as *mut u16).write(3);
            (b.add(o::BD_MBUF_PORT as usize) as *mut u16).write(7);
            (b.add(o::BD_MBUF_OL_FLAGS as usize) as *mut u64).write(0xff);
            (b.add(o::BD_MBUF_PACKET_TYPE as usize) as *mut u32).write(0x11);
            (b.add(o::BD_MBUF_DATA_OFF as usize) as *mut u16).write(5);
            layout.set_len(m, 99);
        }
    }
    unsafe {
        dpdk_ffi::bd_pktmbuf_reset(pair[0]);
        layout.set_len(pair[0], 60);
        layout.reset_to_len(pair[1], 60);
    }
    let header = |m: *mut dpdk::Mbuf| unsafe { std::slice::from_raw_parts(m as *const u8, usize::from(layout.mbuf_size)).to_vec() };
    // Past buf_addr and buf_iova (each mbuf's own buffer), the headers agree byte for byte.
    assert_eq!(header(pair[0])[16..], header(pair[1])[16..], "reset_to_len differs from rte_pktmbuf_reset");
    assert_eq!(dpdk::MBUF_F_EXTERNAL, unsafe { dpdk_ffi::bd_mbuf_f_external });
    unsafe { dpdk_ffi::bd_pktmbuf_free_bulk(pair.as_mut_ptr(), 2) };

    // A burst taken, written and sent through the safe layer.
    let mut burst = dpdk::Burst::new();
    assert!(burst.alloc(&tx_pool, 4));
    burst.write_heads::<60>(60, |f| f[59] = 1);
    assert!(burst.frames().all(|f| f.len() == 60 && f[59] == 1));
    while !burst.is_empty() {
        burst.tx(&mut txqs[0]);
    }

    let mut sent = 0;
    while sent < 8 {
        sent += txqs[0].tx_burst(&mut mbufs[sent..]);
    }
    let mut got = [std::ptr::null_mut(); 32];
    let n = rxqs[0].rx_burst(&mut got);
    assert!(n > 0, "net_null always has frames to receive");
    unsafe { dpdk_ffi::rte_pktmbuf_free_bulk(got.as_mut_ptr(), n as u32) };

    let stats = port.stats().unwrap();
    assert_eq!(stats.opackets, 12);
    assert!(stats.ipackets >= n as u64);

    // Extended stats: names, ids resolved once, values read by id.
    let names = port.xstat_names().unwrap();
    assert!(names.iter().any(|n| n == "tx_good_packets"), "{names:?}");
    let ids = port.xstat_ids(&["tx_good_packets", "rx_good_packets"]).unwrap();
    let values = port.xstats(&ids).unwrap();
    assert_eq!(values[0], 12);
    assert!(values[1] >= n as u64);
    assert!(port.xstat_ids(&["no_such_counter"]).is_err());

    // Work on a worker lcore: a value comes back, a panic comes back as an error.
    let job = dpdk::launch(1, || dpdk_ffi::RTE_MAX_LCORE + unsafe { dpdk_ffi::bd_lcore_id() }).unwrap();
    assert_eq!(job.join().unwrap(), dpdk_ffi::RTE_MAX_LCORE + 1);
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
