//! How late this host wakes a sleeping thread: the bench's lateness probe
//! (`flashbuf::bench::lateness::LatenessProbe`) run alone, with the timer slack an emulated
//! device's waiters now use (`tight`, 1 ns) or the kernel's default (`default`, 50 us), the
//! measurement behind docs/reproduce.md, "Host timing".
//!
//! `cargo run --release --example host_lateness -- [tight|default] [SECONDS]` prints the mean,
//! p50, p99 and maximum lateness in real microseconds (defaults: tight, 2 s).

use std::time::Duration;

use flashbuf::bench::lateness::LatenessProbe;

fn main() {
    let mut args = std::env::args().skip(1);
    let slack = args.next().unwrap_or_else(|| "tight".into());
    let seconds: f64 = match args.next().map(|text| text.parse()) {
        None => 2.0,
        Some(Ok(seconds)) if seconds > 0.0 && seconds <= 600.0 => seconds,
        Some(_) => {
            eprintln!("SECONDS must be a number in (0, 600]");
            std::process::exit(2);
        }
    };
    match slack.as_str() {
        "tight" => {}
        // The probe tightens the slack once per thread; mark it done, then restore the
        // kernel's default (a slack of 0 means the default).
        "default" => {
            flashbuf::device::ticket::tight_timer();
            // SAFETY: PR_SET_TIMERSLACK only changes the calling thread's timer slack.
            let _ = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 0 as libc::c_ulong, 0, 0, 0) };
        }
        other => {
            eprintln!("unknown slack `{other}`: use tight or default");
            std::process::exit(2);
        }
    }
    let Some(mut probe) = LatenessProbe::new() else {
        eprintln!("could not build the probe's histogram");
        std::process::exit(1);
    };
    probe.run_for(Duration::from_secs_f64(seconds));
    let Some(summary) = probe.summary(1.0, 0.0) else {
        eprintln!("no samples");
        std::process::exit(1);
    };
    println!(
        "slack {slack}: {} sleeps, lateness mean {:.1} us, p50 {:.0} us, p99 {:.0} us, max {:.0} us",
        summary.samples, summary.mean_us, summary.p50_us, summary.p99_us, summary.max_us
    );
}
