//! How many candidates of ggml's `make_qkx2_quants` search (Q4_K, Q5_K) a bound on their error
//! could skip: `cargo run --release --example qkx2_prune_rate`. A scalar model of the search
//! (ggml's f32 order) on groups of N(0, 0.02) values with Q4_K/Q5_K's weights. Per candidate:
//! "never taken" (its f32 error ≥ the best so far; the error pass was wasted), and "bound
//! prunes": E = s²A + 2smB − 2sC + m²W − 2mX + Q in f64 from the f32 sums, less their
//! worst-case rounding (γ·magnitude) and that of ggml's error pass, is ≥ the best. The simd128
//! search skips a step's error pass only if every lane of a vector (4) or a pass (8) prunes.
//! docs/quantize.md (Speed) says why this was not shipped.

fn nearest_int(v: f32) -> i32 {
    let bits = (v + 12_582_912.0f32).to_bits();
    (bits & 0x007f_ffff) as i32 - 0x0040_0000
}

struct Params {
    nmax: i32,
    rmin: f32,
    rdelta: f32,
    nstep: i32,
}

/// (never taken, bound prunes) per candidate with D > 0, in step order.
fn search(x: &[f32], w: &[f32], p: &Params) -> Vec<(bool, bool)> {
    let n = x.len();
    let mut out = Vec::new();
    let (mut min, mut max) = (x[0], x[0]);
    let (mut sum_w, mut sum_x) = (w[0], w[0] * x[0]);
    for i in 1..n {
        min = if x[i] < min { x[i] } else { min };
        max = if x[i] > max { x[i] } else { max };
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    min = if min > 0.0 { 0.0 } else { min };
    if max == min {
        return out;
    }
    let nmax = p.nmax;
    let iscale = nmax as f32 / (max - min);
    let scale = 1.0 / iscale;
    let mut best = 0.0f32;
    for i in 0..n {
        let l = nearest_int(iscale * (x[i] - min)).clamp(0, nmax) as f32;
        let d = scale * l + min - x[i];
        best += w[i] * (d * d);
    }
    let f64s = |f: &dyn Fn(usize) -> f64| (0..n).map(f).sum::<f64>();
    let q = f64s(&|i| f64::from(w[i]) * f64::from(x[i]).powi(2));
    let xabs = f64s(&|i| f64::from(w[i]) * f64::from(x[i]).abs());
    let rmax = x.iter().fold(0.0f64, |a, v| a.max(f64::from(v.abs())));
    let u = f64::from(f32::EPSILON) / 2.0;
    let gamma = (n as f64 + 2.0) * u * 1.01;
    let mut laux = vec![0.0f32; n];
    for is in 0..=p.nstep {
        let iscale = (p.rmin + p.rdelta * is as f32 + nmax as f32) / (max - min);
        let (mut sl, mut sl2, mut sxl) = (0.0f32, 0.0f32, 0.0f32);
        for i in 0..n {
            let l = nearest_int(iscale * (x[i] - min)).clamp(0, nmax) as f32;
            laux[i] = l;
            let wl = w[i] * l;
            sl += wl;
            sl2 += wl * l;
            sxl += wl * x[i];
        }
        let d = sum_w * sl2 - sl * sl;
        if d <= 0.0 {
            continue;
        }
        let (mut ts, mut tm) = ((sum_w * sxl - sum_x * sl) / d, (sl2 * sum_x - sl * sxl) / d);
        if tm > 0.0 {
            tm = 0.0;
            ts = sxl / sl2;
        }
        let mut cur = 0.0f32;
        for i in 0..n {
            let df = ts * laux[i] + tm - x[i];
            cur += w[i] * (df * df);
        }
        let (s, m) = (f64::from(ts), f64::from(tm));
        let (a, b, c) = (f64::from(sl2), f64::from(sl), f64::from(sxl));
        let (ww, xx) = (f64::from(sum_w), f64::from(sum_x));
        let e = s * s * a + 2.0 * s * m * b - 2.0 * s * c + m * m * ww - 2.0 * m * xx + q;
        let t = s * s * a + 2.0 * (s * m).abs() * b + m * m * ww;
        let mag = t + 2.0 * s.abs() * rmax * b + 2.0 * m.abs() * xabs + q;
        let lo = e - gamma * mag;
        let bound = if lo > 0.0 {
            (1.0 - gamma) * (lo - 8.0 * u * (lo * t).sqrt())
        } else {
            0.0
        };
        out.push((cur >= best, bound >= f64::from(best)));
        if cur < best {
            best = cur;
            min = tm;
        }
    }
    out
}

fn main() {
    let mut state = 0x1234_5678u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut gauss = move || {
        let (u1, u2) = (next() + 1e-300, next());
        ((-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()) as f32 * 0.02
    };
    let types = [
        (
            "Q4_K",
            Params {
                nmax: 15,
                rmin: -1.0,
                rdelta: 0.1,
                nstep: 20,
            },
        ),
        (
            "Q5_K",
            Params {
                nmax: 31,
                rmin: -0.5,
                rdelta: 0.1,
                nstep: 15,
            },
        ),
    ];
    for (name, p) in types {
        let groups: Vec<Vec<(bool, bool)>> = (0..20_000)
            .map(|_| {
                let x: Vec<f32> = (0..32).map(|_| gauss()).collect();
                let sum_x2: f32 = x.iter().map(|v| v * v).sum();
                let av = (sum_x2 / 32.0).sqrt();
                let w: Vec<f32> = x.iter().map(|v| av + v.abs()).collect();
                search(&x, &w, &p)
            })
            .collect();
        let all: Vec<&(bool, bool)> = groups.iter().flatten().collect();
        let rate = |f: &dyn Fn(&(bool, bool)) -> bool| {
            all.iter().filter(|c| f(c)).count() as f64 / all.len() as f64
        };
        // Steps where every lane of `lanes` consecutive groups prunes.
        let together = |lanes: usize| {
            let (mut steps, mut pruned) = (0usize, 0usize);
            for g in groups.chunks(lanes) {
                let n = g.iter().map(Vec::len).max().unwrap_or(0);
                steps += n;
                pruned += (0..n)
                    .filter(|&s| g.iter().all(|c| c.get(s).map_or(true, |c| c.1)))
                    .count();
            }
            pruned as f64 / steps as f64
        };
        println!(
            "{name}: {:.1} candidates per group; never taken {:.1} %, bound prunes {:.1} % \
             per lane ({} pruned but taken), {:.1} % of steps for 4 lanes together, {:.1} % for 8",
            all.len() as f64 / groups.len() as f64,
            100.0 * rate(&|c| c.0),
            100.0 * rate(&|c| c.1),
            all.iter().filter(|c| c.1 && !c.0).count(),
            100.0 * together(4),
            100.0 * together(8),
        );
    }
}
