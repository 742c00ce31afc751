use ccsim_core::api;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (n, rate, rtt, dur) = (&a[1], &a[2], &a[3], &a[4]);
    let toml = format!("duration = \"{dur}\"\n[bottleneck]\nrate = \"{rate}\"\n[[flows]]\ncount = {n}\nrtt = \"{rtt}\"\n");
    let sc = api::parse(&toml, "toml").unwrap();
    let out = api::run(&sc, None).unwrap();
    let s = &out.summary;
    println!(
        "n={n} rate={rate} rtt={rtt}: wall {:.3}s {:.1} M ev/s {:.2} M pkt/s, ev/pkt {:.1}",
        s.wall_s,
        s.events as f64 / s.wall_s / 1e6,
        s.bottleneck_packets as f64 / s.wall_s / 1e6,
        s.events as f64 / s.bottleneck_packets as f64
    );
}
