use super::*;

#[test]
fn cpu_from_nanoseconds_unless_a_thread_exited() {
    let mark = CpuMark {
        threads: HashMap::from([(1, 1_000_000), (2, 5_000_000)]),
        ticks: 10,
    };
    // A new thread counts in full.
    let now = HashMap::from([(1, 3_000_000), (2, 5_500_000), (3, 500_000)]);
    assert!((cpu_ms_between(&mark, &now, 12, 100) - 3.0).abs() < 1e-9);
    // Thread 2 exited: its time is lost to schedstat, so the ticks are used.
    let now = HashMap::from([(1, 3_000_000)]);
    assert!((cpu_ms_between(&mark, &now, 12, 100) - 20.0).abs() < 1e-9);
}

#[test]
fn reads_callgrind_totals() {
    let text = "version: 1\ncmd: weft\nevents: Ir\nsummary: 123456\nfn=main\n";
    assert_eq!(callgrind_total(text), Some(123456));
    assert_eq!(callgrind_total("totals: 42\n"), Some(42));
    assert_eq!(callgrind_total("events: Ir\n"), None);
}

#[test]
fn reads_this_process_cpu() {
    let pid = std::process::id();
    let mark = cpu_mark(pid).unwrap();
    let mut x = 0u64;
    for i in 0..1_000_000u64 {
        x = x.wrapping_add(i * i);
    }
    assert!(x > 0);
    assert!(cpu_ms_since(pid, &mark).unwrap() >= 0.0);
    assert!(peak_rss_kib(pid).unwrap() > 0);
}
