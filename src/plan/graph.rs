//! The compute buffers derived, not estimated, for the families whose graph this module builds
//! (llama.cpp's graphs of `llama` for Llama, Mistral and Mixtral, `qwen2`, `qwen3`, `qwen3moe`,
//! with sliding-window layers `gemma2` and `gemma3`, and with one QKV projection and head counts
//! per layer `openelm`: without MLA, recurrent layers or shared experts):
//! the worst-case graph llama.cpp reserves (one `n_ubatch` batch over a full cache, every token
//! an output) is built here node by node with each tensor's size, then scheduled and allocated
//! as ggml does it:
//!
//! - the scheduler (ggml-backend's `ggml_backend_sched_split_graph`): ops that read a weight run
//!   where the weight is, inputs are the CPU's, the other ops take the backend of the GPU op
//!   before them (then after, then any before or after); consecutive ops of one backend form a
//!   split, and each tensor a split reads from another backend is copied into it at the split's
//!   start (with pipeline parallelism, several GPUs and every layer offloaded, 4 copies of each
//!   such copy and of each graph input, never freed);
//! - the allocator (ggml-alloc's `ggml_gallocr`): the inputs first, then each node in order,
//!   reusing a parent's memory when the op can run in place and the parent has no other use,
//!   freeing each tensor after its last use (views keep their source alive), from a best-fit
//!   list of free blocks; a buffer's size is the highest address it reached.
//!
//! The sizes are checked against llama.cpp's log on models and settings this was not written
//! from (tests/oracle_compute.rs). Other families keep the estimate of [`super::compute`].

use super::hparams::HParams;
use super::kv::KvPlan;
use super::Options;
use crate::model::GgufModel;
use crate::types::GgmlType;

/// ggml's tensor alignment for the CPU and RPC buffers (`TENSOR_ALIGNMENT`).
const ALIGN: u64 = 32;
/// `GGML_SCHED_MAX_COPIES`.
const N_COPIES: usize = 4;

#[derive(Clone, Default)]
struct Tn {
    /// Bytes (`ggml_nbytes`).
    size: u64,
    /// Element type size and shape, for `ggml_are_same_layout` (contiguous tensors only: views
    /// are never reused, they are not the allocator's own).
    layout: (u64, [u64; 4]),
    srcs: Vec<usize>,
    /// A view's source (the root, as ggml's `view_src`).
    view_of: Option<usize>,
    /// A view op (VIEW, RESHAPE, PERMUTE, TRANSPOSE): skipped by the scheduler's passes.
    view_op: bool,
    /// ggml-backend's dependency nodes (`GGML_OP_NONE` views): not counted as views.
    op_none: bool,
    /// Pre-allocated on this backend (weights and caches): never allocated here.
    pre: Option<usize>,
    /// A weight (buffer usage WEIGHTS): ops reading one run on its backend.
    weight: bool,
    input: bool,
    output: bool,
    inplace: bool,
    /// ROPE and FLASH_ATTN_EXT: not placed by their (small) weight sources.
    skip_weight: bool,
}

/// `ts` bytes times the elements of `ne` (saturating: a header's absurd sizes give a huge
/// buffer, never an overflow).
fn bytes(ts: u64, ne: [u64; 4]) -> u64 {
    ne.iter().fold(ts, |a, &n| a.saturating_mul(n))
}

/// A graph under construction, in ggml's node order.
struct Graph {
    t: Vec<Tn>,
    nodes: Vec<usize>,
    leafs: Vec<usize>,
}

impl Graph {
    fn push(&mut self, t: Tn) -> usize {
        self.t.push(t);
        self.t.len() - 1
    }
    /// A graph input (the CPU's): tokens, positions, indices, masks.
    fn input(&mut self, ts: u64, ne: [u64; 4]) -> usize {
        let id = self.push(Tn {
            size: bytes(ts, ne),
            layout: (ts, ne),
            input: true,
            ..Tn::default()
        });
        self.leafs.push(id);
        id
    }
    /// A weight or a cache on `dev`.
    fn pre(&mut self, dev: usize, weight: bool) -> usize {
        self.push(Tn {
            pre: Some(dev),
            weight,
            ..Tn::default()
        })
    }
    /// An op producing a new contiguous f32 (or `ts`-byte) tensor of shape `ne`.
    fn op(&mut self, ts: u64, ne: [u64; 4], srcs: &[usize], inplace: bool) -> usize {
        let id = self.push(Tn {
            size: bytes(ts, ne),
            layout: (ts, ne),
            srcs: srcs.to_vec(),
            inplace,
            ..Tn::default()
        });
        self.nodes.push(id);
        id
    }
    fn f32(&mut self, ne: [u64; 4], srcs: &[usize], inplace: bool) -> usize {
        self.op(4, ne, srcs, inplace)
    }
    /// An op with the layout of `like` (element-wise: norms, scaled products, sums).
    fn same(&mut self, like: usize, srcs: &[usize], inplace: bool) -> usize {
        let (ts, ne) = self.t[like].layout;
        self.op(ts, ne, srcs, inplace)
    }
    /// A view of `of` (`size` its bytes: what a copy of it would take).
    fn view(&mut self, of: usize, size: u64, layout: (u64, [u64; 4])) -> usize {
        let root = self.t[of].view_of.unwrap_or(of);
        let pre = self.t[root].pre;
        let id = self.push(Tn {
            size,
            layout,
            srcs: vec![of],
            view_of: Some(root),
            view_op: true,
            pre,
            ..Tn::default()
        });
        if pre.is_none() {
            self.nodes.push(id);
        }
        id
    }
    /// A view of `of` with its size and a new shape (a reshape).
    fn reshape(&mut self, of: usize, ne: [u64; 4]) -> usize {
        let (ts, _) = self.t[of].layout;
        let size = self.t[of].size;
        self.view(of, size, (ts, ne))
    }
    /// An op whose result is a view of a pre-allocated tensor (a cache write).
    fn write(&mut self, cache: usize, srcs: &[usize]) -> usize {
        let pre = self.t[cache].pre;
        let mut all = srcs.to_vec();
        all.push(cache);
        let id = self.push(Tn {
            srcs: all,
            view_of: Some(cache),
            pre,
            ..Tn::default()
        });
        self.nodes.push(id);
        id
    }
}

/// A cache's graph inputs (llama.cpp's per-cache rotations, write indices and mask).
#[derive(Clone, Default)]
struct CacheInputs {
    k_rot: Option<usize>,
    v_rot: Option<usize>,
    k_idxs: Option<usize>,
    v_idxs: Option<usize>,
    mask: Option<usize>,
}

/// The input in `slot`, made now if the graph has not met it yet.
fn lazy(g: &mut Graph, slot: &mut Option<usize>, ts: u64, ne: [u64; 4]) -> usize {
    *slot.get_or_insert_with(|| g.input(ts, ne))
}

/// Where the tensors of a layer are: `None` the CPU, `Some(i)` GPU i.
pub(super) struct Placement<'a> {
    /// The device of layer il's weights and cache (il = n_layer: the output layer).
    pub layer: &'a dyn Fn(u32) -> Option<usize>,
    /// The device of a named weight (overrides applied).
    pub tensor: &'a dyn Fn(&str) -> Option<usize>,
    pub n_gpu: usize,
    /// Pipeline parallelism (several GPUs, every layer offloaded, nothing overridden).
    pub pipelined: bool,
}

/// Whether this module builds `hp`'s graph (else: the estimate).
pub(super) fn supported(model: &GgufModel, hp: &HParams, _o: &Options) -> bool {
    let arch = hp.arch.as_str();
    if !matches!(
        arch,
        "llama" | "qwen2" | "qwen3" | "qwen3moe" | "gemma2" | "gemma3" | "openelm"
    ) {
        return false;
    }
    let gemma = matches!(arch, "gemma2" | "gemma3");
    // OpenELM: one QKV projection and head counts per layer (the others build with layer 0's)
    let openelm = arch == "openelm";
    if hp.mla || hp.recurrent.is_some() || hp.no_kv || hp.fused_qkv != openelm {
        return false;
    }
    if hp.n_swa > 0 && !gemma {
        return false;
    }
    let n_layer = hp.n_layer as usize;
    if hp.n_head.len() != n_layer || hp.n_head_kv.len() != n_layer || hp.has_kv.len() != n_layer {
        return false;
    }
    let same = |v: &[u64]| v.iter().all(|&x| x == v[0]);
    if !openelm && (!same(&hp.n_head) || !same(&hp.n_head_kv)) {
        return false;
    }
    if hp.has_kv.iter().any(|&k| !k) || hp.n_head.contains(&0) || hp.n_head_kv.contains(&0) {
        return false;
    }
    if openelm && hp.n_embd_head_k != hp.n_embd_head_v {
        return false; // llm_build_openelm asserts it
    }
    // widths a header may make absurd: bounded, so that the graph's products of widths and
    // tokens (at most a few thousand) cannot overflow
    const WIDE: u64 = 1 << 40;
    let heads = |il: usize| {
        let (hk, hv) = (
            hp.n_embd_head_k.max(hp.n_embd_head_k_swa),
            hp.n_embd_head_v.max(hp.n_embd_head_v_swa),
        );
        let n = hp.n_head[il].checked_add(hp.n_head_kv[il].checked_mul(2)?)?;
        hk.max(hv).checked_mul(n)
    };
    if (0..n_layer).any(|il| heads(il).map_or(true, |w| w > WIDE))
        || [hp.n_embd, hp.n_vocab, hp.n_ff].iter().any(|&w| w > WIDE)
    {
        return false;
    }
    // the tensors the builders read, and no others that add ops (biases, scales)
    let has = |n: &str| model.tensor(n).is_ok();
    let projections: &[&str] = if openelm {
        &["attn_qkv", "attn_output"]
    } else {
        &["attn_q", "attn_k", "attn_v", "attn_output"]
    };
    for il in 0..hp.n_layer {
        for part in projections {
            if !has(&format!("blk.{il}.{part}.weight")) {
                return false;
            }
        }
        let moe = has(&format!("blk.{il}.ffn_gate_inp.weight"));
        if moe {
            // llama.cpp's LLAMA_MAX_EXPERTS; 2 to all experts used (one used: not checked)
            let n_expert = model
                .tensor(&format!("blk.{il}.ffn_gate_exps.weight"))
                .ok()
                .and_then(|(_, t)| t.dims().get(2).copied());
            let used = super::hparams::expert_used(model.first(), arch);
            match (n_expert, used) {
                (Some(n), Some(u)) if (2..=512).contains(&n) && (2..=n).contains(&u) => {}
                _ => return false,
            }
            if has(&format!("blk.{il}.ffn_gate_shexp.weight"))
                || has(&format!("blk.{il}.exp_probs_b.bias"))
            {
                return false;
            }
        } else if !has(&format!("blk.{il}.ffn_gate.weight"))
            || !has(&format!("blk.{il}.ffn_up.weight"))
        {
            return false;
        }
        let qk_norm = has(&format!("blk.{il}.attn_q_norm.weight"));
        if qk_norm != matches!(arch, "qwen3" | "qwen3moe" | "gemma3" | "openelm") {
            return false;
        }
        let post_norms = has(&format!("blk.{il}.post_attention_norm.weight"))
            && has(&format!("blk.{il}.post_ffw_norm.weight"));
        if gemma && (moe || !post_norms) {
            return false;
        }
    }
    has("output_norm.weight")
}

/// The compute buffer of each GPU and (last) the CPU for the worst-case graph at `n_ubatch`.
pub(super) fn compute(
    model: &GgufModel,
    hp: &HParams,
    o: &Options,
    kv: &KvPlan,
    n_ubatch: u64,
    place: &Placement,
) -> Vec<u64> {
    let cpu = place.n_gpu;
    let dev = |d: Option<usize>| d.unwrap_or(cpu);
    // llama_context::graph_reserve: the tokens a multiple of the sequences (one stream each),
    // the outputs as many as the micro-batch's tokens
    let n_seq = u64::from(o.parallel.max(1));
    let t = n_ubatch.div_ceil(n_seq) * n_seq;
    let n_out = n_ubatch;
    let e = hp.n_embd;
    let fa = o.flash_attn;
    let gemma = matches!(hp.arch.as_str(), "gemma2" | "gemma3");
    let mut g = Graph {
        t: Vec::new(),
        nodes: Vec::new(),
        leafs: Vec::new(),
    };
    let w = |g: &mut Graph, name: &str| {
        let d = dev((place.tensor)(name));
        g.pre(d, true)
    };
    // the inputs, in the order llama.cpp's graph meets them (ggml lists leafs in the order its
    // depth-first walk reaches them): each cache's are made at the first layer using it
    let tokens = g.input(4, [t, 1, 1, 1]);
    let _embd_in = g.input(4, [e, t, 1, 1]);
    let mut pos: Option<usize> = None;
    let mut cache_in: Vec<CacheInputs> = vec![CacheInputs::default(); kv.caches.len().max(1)];
    // the transposed V cache's row (and so its write indices) is the widest layer's
    let v_row_max = hp.n_embd_v_gqa_max();

    let tok_embd = w(&mut g, "token_embd.weight");
    let mut inp_l = g.f32([e, t, 1, 1], &[tok_embd, tokens], false);
    if gemma {
        // the embedding scaled by sqrt(n_embd)
        inp_l = g.same(inp_l, &[inp_l], true);
    }
    let moe_shape = |il: u32| -> Option<(u64, u64, u64)> {
        let gate = model
            .tensor(&format!("blk.{il}.ffn_gate_exps.weight"))
            .ok()?;
        let dims = gate.1.dims();
        let n_expert = *dims.get(2)?;
        let n_ff = *dims.get(1)?;
        let used = super::hparams::expert_used(model.first(), &hp.arch)?;
        Some((n_expert, n_ff, used))
    };
    let mut out_ids: Option<usize> = None;
    for il in 0..hp.n_layer {
        let l = il as usize;
        let p = |s: &str| format!("blk.{il}.{s}.weight");
        let layer_dev = dev((place.layer)(il));
        let swa = hp.is_swa.get(l) == Some(&true);
        let (nh, nkv) = (hp.n_head[l], hp.n_head_kv[l]);
        let (hk, hv) = if swa {
            (hp.n_embd_head_k_swa, hp.n_embd_head_v_swa)
        } else {
            (hp.n_embd_head_k, hp.n_embd_head_v)
        };
        let ci = kv.caches.iter().position(|c| c.swa == swa).unwrap_or(0);
        let fused = model.tensor(&p("attn_qkv")).is_ok();
        let n_kv = kv.caches.get(ci).map_or(0, |c| c.cells);
        let n_streams = kv.caches.get(ci).map_or(1, |c| c.streams.max(1));
        // a quantized cache's Hadamard rotations (llama_kv_cache's attn_rot_k / attn_rot_v):
        // K's the largest power of two from 64 dividing the head size, V's 64
        let rot_k = (!o.type_k.is_plain() && hk % 64 == 0).then(|| {
            let mut n = 64;
            while hk % (n * 2) == 0 {
                n *= 2;
            }
            n
        });
        let rot_v = (!o.type_v.is_plain() && hv % 64 == 0).then_some(64u64);
        let k_rot = rot_k.map(|n| lazy(&mut g, &mut cache_in[ci].k_rot, 4, [n, n, 1, 1]));
        let pos = *pos.get_or_insert_with(|| g.input(4, [t, 1, 1, 1]));
        let norm = g.same(inp_l, &[inp_l], true);
        let wn = w(&mut g, &p("attn_norm"));
        let attn_norm = g.same(norm, &[norm, wn], true);
        // build_qkv's biases: an add after each projection (in place)
        let bias = |g: &mut Graph, x: usize, name: &str| match model.tensor(name) {
            Ok(_) => {
                let b = w(g, name);
                g.same(x, &[x, b], true)
            }
            Err(_) => x,
        };
        // OpenELM's one projection of Q, K and V, with Q, K and V views of its heads
        let qkv = if fused {
            let wqkv = w(&mut g, &p("attn_qkv"));
            let n_qkv = nh + 2 * nkv;
            let m = g.f32([hk * n_qkv, t, 1, 1], &[wqkv, attn_norm], false);
            Some(g.reshape(m, [hk, n_qkv, t, 1]))
        } else {
            None
        };
        // (called for OpenELM's layers only, where `qkv` is the projection's reshape)
        let heads_view = |g: &mut Graph, n: u64| {
            let of = qkv.unwrap_or(0);
            g.view(of, bytes(4, [hk, n, t, 1]), (4, [hk, n, t, 1]))
        };
        let mut qr = if fused {
            heads_view(&mut g, nh)
        } else {
            let wq = w(&mut g, &p("attn_q"));
            let q = g.f32([nh * hk, t, 1, 1], &[wq, attn_norm], false);
            let q = bias(&mut g, q, &format!("blk.{il}.attn_q.bias"));
            g.reshape(q, [hk, nh, t, 1])
        };
        let qk_norm = model.tensor(&p("attn_q_norm")).is_ok();
        if qk_norm {
            let n = g.f32([hk, nh, t, 1], &[qr], true);
            let wqn = w(&mut g, &p("attn_q_norm"));
            qr = g.same(n, &[n, wqn], true);
        }
        let mut q_rope = g.f32([hk, nh, t, 1], &[qr, pos], true);
        g.t[q_rope].skip_weight = true;
        if gemma {
            // Q scaled by f_attention_scale (the product's scale is then 1)
            q_rope = g.same(q_rope, &[q_rope], true);
        }
        // llama_mul_mat_hadamard: a 2-d view, the product with the rotation, a 4-d view
        let hadamard = |g: &mut Graph, x: usize, rot: Option<usize>, n: Option<u64>| match (rot, n)
        {
            (Some(r), Some(n)) => {
                let elems = g.t[x].size / 4;
                let v2 = g.reshape(x, [n, elems / n, 1, 1]);
                let m = g.f32([n, elems / n, 1, 1], &[r, v2], false);
                let ne = g.t[x].layout.1;
                g.reshape(m, ne)
            }
            _ => x,
        };
        q_rope = hadamard(&mut g, q_rope, k_rot, rot_k);
        // build_attn expands Q, V, K (K last, for rope fusion into the cache write); the
        // sliding-window variant expands Q, K, V
        let mut vr = 0;
        let mut v_strided = false;
        let mut k_rope = 0;
        let k_first = !kv.caches.iter().all(|c| !c.swa);
        for part in if k_first { [1, 0] } else { [0, 1] } {
            if part == 0 {
                let v_rot = rot_v.map(|n| lazy(&mut g, &mut cache_in[ci].v_rot, 4, [n, n, 1, 1]));
                let mut r = if fused {
                    // a strided view of the V heads, made contiguous where an op needs it
                    v_strided = true;
                    heads_view(&mut g, nkv)
                } else {
                    let wv = w(&mut g, &p("attn_v"));
                    let v = g.f32([nkv * hv, t, 1, 1], &[wv, attn_norm], false);
                    let v = bias(&mut g, v, &format!("blk.{il}.attn_v.bias"));
                    g.reshape(v, [hv, nkv, t, 1])
                };
                if v_strided && v_rot.is_some() {
                    // llama_mul_mat_hadamard copies a strided input into rows (ggml_cont_2d)
                    let ne = g.t[r].layout.1;
                    r = g.f32(ne, &[r], false);
                    v_strided = false;
                }
                vr = hadamard(&mut g, r, v_rot, rot_v);
            } else {
                let mut kr = if fused {
                    heads_view(&mut g, nkv)
                } else {
                    let wk = w(&mut g, &p("attn_k"));
                    let k = g.f32([nkv * hk, t, 1, 1], &[wk, attn_norm], false);
                    let k = bias(&mut g, k, &format!("blk.{il}.attn_k.bias"));
                    g.reshape(k, [hk, nkv, t, 1])
                };
                if qk_norm {
                    let n = g.f32([hk, nkv, t, 1], &[kr], true);
                    let wkn = w(&mut g, &p("attn_k_norm"));
                    kr = g.same(n, &[n, wkn], true);
                }
                let rope = g.f32([hk, nkv, t, 1], &[kr, pos], true);
                g.t[rope].skip_weight = true;
                k_rope = hadamard(&mut g, rope, k_rot, rot_k);
            }
        }
        // the cache writes
        let cache_k = g.pre(layer_dev, false);
        let cache_v = g.pre(layer_dev, false);
        let k_view = g.reshape(k_rope, [hk * nkv, t, 1, 1]);
        let k_idxs = lazy(&mut g, &mut cache_in[ci].k_idxs, 8, [t, 1, 1, 1]);
        let _ = g.write(cache_k, &[k_view, k_idxs]);
        let v_view = if fa {
            g.reshape(vr, [hv * nkv, t, 1, 1])
        } else {
            let mut r = if v_strided {
                // llama_kv_cache::cpy_v copies a strided V into rows
                g.f32([hv * nkv, t, 1, 1], &[vr], false)
            } else {
                g.reshape(vr, [hv * nkv, t, 1, 1])
            };
            if hv * nkv < v_row_max {
                // the transposed cache's rows are the widest layer's: this layer's V padded
                r = g.f32([v_row_max, t, 1, 1], &[r], false);
            }
            let n = g.t[r].layout.1[0] * t;
            g.reshape(r, [1, n, 1, 1])
        };
        let v_idxs_ne = if fa { t } else { t * v_row_max };
        let v_idxs = lazy(&mut g, &mut cache_in[ci].v_idxs, 8, [v_idxs_ne, 1, 1, 1]);
        let _ = g.write(cache_v, &[v_view, v_idxs]);
        let mask = lazy(
            &mut g,
            &mut cache_in[ci].mask,
            if fa { 2 } else { 4 },
            [n_kv, t, 1, 1],
        );
        let kc = g.view(cache_k, 0, (2, [0; 4]));
        let vc = g.view(cache_v, 0, (2, [0; 4]));
        let q_perm = g.view(q_rope, g.t[q_rope].size, (4, [0; 4]));
        let attn = if fa {
            // flash attention reads f16: an f32 cache is cast first (K, then V)
            let kc = if o.type_k == GgmlType::F32 {
                g.op(2, [hk, n_kv, nkv, n_streams], &[kc], false)
            } else {
                kc
            };
            let vc = if o.type_v == GgmlType::F32 {
                g.op(2, [hv, n_kv, nkv, n_streams], &[vc], false)
            } else {
                vc
            };
            let o = g.f32([hv, nh, t, 1], &[q_perm, kc, vc, mask], false);
            g.t[o].skip_weight = true;
            let r = g.reshape(o, [hv * nh, t, 1, 1]);
            hadamard(&mut g, r, cache_in[ci].v_rot, rot_v)
        } else {
            let mut kq = g.f32([n_kv, t, nh, 1], &[kc, q_perm], false);
            if hp.arch == "gemma2" {
                // the scores' soft cap: scale, tanh, scale (each in place)
                for _ in 0..3 {
                    kq = g.same(kq, &[kq], true);
                }
            }
            let sm = g.same(kq, &[kq, mask], true);
            let kqv = g.f32([hv, t, nh, 1], &[vc, sm], false);
            let perm = g.view(kqv, g.t[kqv].size, (4, [0; 4]));
            g.f32([hv * nh, t, 1, 1], &[perm], false)
        };
        let wo = w(&mut g, &p("attn_output"));
        let mut cur = g.f32([e, t, 1, 1], &[wo, attn], false);
        cur = bias(&mut g, cur, &format!("blk.{il}.attn_output.bias"));
        let mut inp_sa = inp_l;
        let last = il + 1 == hp.n_layer;
        if last {
            let ids = *out_ids.get_or_insert_with(|| g.input(4, [n_out, 1, 1, 1]));
            cur = g.f32([e, n_out, 1, 1], &[cur, ids], false);
            inp_sa = g.f32([e, n_out, 1, 1], &[inp_sa, ids], false);
        }
        // Gemma's norms after the attention and after the feed-forward
        let post_norm = |g: &mut Graph, x: usize, name: &str| {
            if !gemma {
                return x;
            }
            let n = g.same(x, &[x], true);
            let wn = w(g, &format!("blk.{il}.{name}.weight"));
            g.same(n, &[n, wn], true)
        };
        cur = post_norm(&mut g, cur, "post_attention_norm");
        // OpenELM adds the attention to the residual (the residual the first operand)
        let ffn_inp = if hp.arch == "openelm" {
            g.same(cur, &[inp_sa, cur], true)
        } else {
            g.same(cur, &[cur, inp_sa], true)
        };
        let norm = g.same(ffn_inp, &[ffn_inp], true);
        let wn = w(&mut g, &p("ffn_norm"));
        let ffn_norm = g.same(norm, &[norm, wn], true);
        // the last layer's feed-forward runs on the outputs only
        let tf = if il + 1 == hp.n_layer { n_out } else { t };
        let ffn_out = match moe_shape(il) {
            None => {
                let n_ff = model
                    .tensor(&p("ffn_up"))
                    .ok()
                    .and_then(|(_, t)| t.dims().get(1).copied())
                    .unwrap_or(hp.n_ff);
                let wg = w(&mut g, &p("ffn_gate"));
                let gate = g.f32([n_ff, tf, 1, 1], &[wg, ffn_norm], false);
                let wu = w(&mut g, &p("ffn_up"));
                let up = g.f32([n_ff, tf, 1, 1], &[wu, ffn_norm], false);
                let sw = g.f32([n_ff, tf, 1, 1], &[gate, up], false);
                let wd = w(&mut g, &p("ffn_down"));
                g.f32([e, tf, 1, 1], &[wd, sw], false)
            }
            Some((n_exp, n_ff, n_used)) => {
                let wgi = w(&mut g, &p("ffn_gate_inp"));
                let logits = g.f32([n_exp, tf, 1, 1], &[wgi, ffn_norm], false);
                let probs = g.same(logits, &[logits], true);
                let probs_r = g.reshape(probs, [1, n_exp, tf, 1]);
                let argsort = g.op(4, [n_exp, tf, 1, 1], &[probs], false);
                // the first n_used of each row: a strided view
                let topk_size = 4 * ((n_used - 1) + (tf - 1) * n_exp + 1);
                let topk = g.view(argsort, topk_size, (4, [0; 4]));
                let weights = g.f32([1, n_used, tf, 1], &[probs_r, topk], false);
                let wr = g.reshape(weights, [n_used, tf, 1, 1]);
                let sum = g.f32([1, tf, 1, 1], &[wr], false);
                let clamped = g.same(sum, &[sum], true);
                let normed = g.f32([n_used, tf, 1, 1], &[wr, clamped], true);
                let normed_r = g.reshape(normed, [1, n_used, tf, 1]);
                let cur_r = g.reshape(ffn_norm, [e, 1, tf, 1]);
                let wg = w(&mut g, &format!("blk.{il}.ffn_gate_exps.weight"));
                let gate = g.f32([n_ff, n_used, tf, 1], &[wg, cur_r, topk], false);
                let wu = w(&mut g, &format!("blk.{il}.ffn_up_exps.weight"));
                let up = g.f32([n_ff, n_used, tf, 1], &[wu, cur_r, topk], false);
                let sw = g.f32([n_ff, n_used, tf, 1], &[gate, up], false);
                let wd = w(&mut g, &format!("blk.{il}.ffn_down_exps.weight"));
                let down = g.f32([e, n_used, tf, 1], &[wd, sw, topk], false);
                let weighted = g.same(down, &[down, normed_r], true);
                let size = 4 * ((e - 1) + (tf - 1) * e * n_used + 1);
                let views: Vec<usize> = (0..n_used)
                    .map(|_| g.view(weighted, size, (4, [0; 4])))
                    .collect();
                let mut acc = views[0];
                for &v in &views[1..] {
                    acc = g.f32([e, tf, 1, 1], &[acc, v], true);
                }
                acc
            }
        };
        let ffn_out = post_norm(&mut g, ffn_out, "post_ffw_norm");
        inp_l = g.same(ffn_out, &[ffn_out, ffn_inp], true);
    }
    let norm = g.same(inp_l, &[inp_l], true);
    let wn = w(&mut g, "output_norm.weight");
    let result_norm = g.same(norm, &[norm, wn], true);
    let out_name = if model.tensor("output.weight").is_ok() {
        "output.weight"
    } else {
        "token_embd.weight"
    };
    let wout = {
        // a tied output runs where the output layer is (llama.cpp duplicates the embedding)
        let d = if out_name == "output.weight" {
            dev((place.tensor)(out_name))
        } else {
            dev((place.layer)(hp.n_layer))
        };
        g.pre(d, true)
    };
    let mut logits = g.f32([hp.n_vocab, n_out, 1, 1], &[wout, result_norm], false);
    if model.tensor("output.bias").is_ok() {
        let b = w(&mut g, "output.bias");
        logits = g.same(logits, &[logits, b], true);
    }
    if hp.arch == "gemma2" {
        // the logits' soft cap: scale, tanh, scale (each in place)
        for _ in 0..3 {
            logits = g.same(logits, &[logits], true);
        }
    }
    g.t[logits].output = true;
    schedule_and_allocate(&mut g, place.n_gpu + 1, place.pipelined)
}

/// The backend ggml's scheduler gives each node, then its splits and their copies, then the
/// allocation: the peak of each backend's buffer.
fn schedule_and_allocate(g: &mut Graph, n_backends: usize, pipelined: bool) -> Vec<u64> {
    let cpu = n_backends - 1;
    let mut be: Vec<Option<usize>> = g.t.iter().map(|t| t.pre).collect();
    // pass 1: pre-allocated tensors, views of them, inputs, ops reading a weight
    let from_cur = |g: &Graph, id: usize| -> Option<usize> {
        let t = &g.t[id];
        if let Some(d) = t.pre {
            return Some(d);
        }
        if t.input {
            return Some(cpu);
        }
        if !t.skip_weight {
            for &s in &t.srcs {
                if g.t[s].weight {
                    return g.t[s].pre;
                }
            }
        }
        None
    };
    for &l in &g.leafs {
        be[l] = from_cur(g, l);
    }
    for &id in &g.nodes {
        if be[id].is_none() {
            be[id] = from_cur(g, id);
        }
    }
    // pass 2: expand GPU backends down and up, then any backend down and up
    let order: Vec<usize> = g
        .nodes
        .iter()
        .copied()
        .filter(|&i| !g.t[i].view_op)
        .collect();
    for (rev, skip_cpu) in [(false, true), (true, true), (false, false), (true, false)] {
        let mut cur: Option<usize> = None;
        let iter: Box<dyn Iterator<Item = &usize>> = if rev {
            Box::new(order.iter().rev())
        } else {
            Box::new(order.iter())
        };
        for &i in iter {
            match be[i] {
                Some(b) => cur = if skip_cpu && b == cpu { None } else { Some(b) },
                None => be[i] = cur,
            }
        }
    }
    // pass 4: views take their source's backend; sources without one their user's
    for &id in &g.nodes {
        if be[id].is_none() {
            if let Some(v) = g.t[id].view_of {
                be[id] = be[v];
            }
        }
        let srcs = g.t[id].srcs.clone();
        for s in srcs {
            if be[s].is_none() {
                be[s] = match g.t[s].view_of {
                    Some(v) if be[v].is_some() => be[v],
                    _ => be[id],
                };
            }
        }
    }
    let be: Vec<usize> = be.into_iter().map(|b| b.unwrap_or(cpu)).collect();

    // pass 5: splits; each source on another backend is copied into the split's backend (once
    // per backend over the whole graph)
    let n_copies = if pipelined { N_COPIES } else { 1 };
    let mut copy_of: std::collections::HashMap<(usize, usize), usize> = Default::default();
    let mut splits: Vec<(usize, Vec<usize>, Vec<usize>)> = Vec::new(); // backend, inputs, nodes
    let mut extra_leafs: Vec<(usize, usize)> = Vec::new(); // (tensor, backend) never freed
    let mut cur_b: Option<usize> = None;
    let nodes = g.nodes.clone();
    for id in nodes {
        if g.t[id].view_op {
            if let Some(s) = splits.last_mut() {
                s.2.push(id);
            } else {
                splits.push((be[id], Vec::new(), vec![id]));
                cur_b = Some(be[id]);
            }
            continue;
        }
        if cur_b != Some(be[id]) {
            splits.push((be[id], Vec::new(), Vec::new()));
            cur_b = Some(be[id]);
        }
        let b = be[id];
        let srcs = g.t[id].srcs.clone();
        for (j, s) in srcs.into_iter().enumerate() {
            let sb = be[s];
            if sb == b || g.t[s].pre == Some(b) {
                continue;
            }
            if g.t[s].weight {
                continue; // an op reading a weight runs where the weight is
            }
            let key = (s, b);
            let c = match copy_of.get(&key) {
                Some(&c) => c,
                None => {
                    let size = g.t[s].size;
                    let layout = g.t[s].layout;
                    let c = g.push(Tn {
                        size,
                        layout,
                        ..Tn::default()
                    });
                    if n_copies > 1 {
                        g.t[c].input = true;
                        g.t[c].output = true;
                        for _ in 1..n_copies {
                            let extra = g.push(Tn {
                                size,
                                layout,
                                input: true,
                                output: true,
                                ..Tn::default()
                            });
                            extra_leafs.push((extra, b));
                        }
                    }
                    copy_of.insert(key, c);
                    splits.last_mut().unwrap().1.push(s);
                    c
                }
            };
            g.t[id].srcs[j] = c;
        }
        splits.last_mut().unwrap().2.push(id);
    }
    // the graph copy: each split's inputs (a dependency on the source, the copy), its nodes
    let mut node_list: Vec<(usize, usize)> = Vec::new();
    for (b, inputs, ns) in &splits {
        for &s in inputs {
            let dep = g.push(Tn {
                srcs: vec![s],
                view_of: Some(g.t[s].view_of.unwrap_or(s)),
                op_none: true,
                ..Tn::default()
            });
            node_list.push((dep, be[s]));
            node_list.push((copy_of[&(s, *b)], *b));
        }
        for &id in ns {
            node_list.push((id, be[id]));
        }
    }
    let mut leaf_list: Vec<(usize, usize)> = Vec::new();
    if n_copies > 1 {
        // the graph inputs, 4 copies each (never freed), then the split inputs' copies
        for &l in &g.leafs.clone() {
            if g.t[l].input {
                g.t[l].output = true;
                leaf_list.push((l, be[l]));
                let (size, layout) = (g.t[l].size, g.t[l].layout);
                for _ in 1..n_copies {
                    let c = g.push(Tn {
                        size,
                        layout,
                        input: true,
                        output: true,
                        ..Tn::default()
                    });
                    leaf_list.push((c, be[l]));
                }
            }
        }
        for (b, inputs, _) in &splits {
            for &s in inputs {
                let c = copy_of[&(s, *b)];
                leaf_list.push((c, *b));
                // its 3 other copies, created with it
                let mine: Vec<usize> = extra_leafs
                    .iter()
                    .filter(|&&(x, xb)| xb == *b && x > c && x < c + n_copies)
                    .map(|&(x, _)| x)
                    .collect();
                for x in mine {
                    leaf_list.push((x, *b));
                }
            }
        }
    }
    for &l in &g.leafs {
        leaf_list.push((l, be[l]));
    }
    allocate(g, &leaf_list, &node_list, n_backends)
}

/// One backend's dynamic allocator (ggml's `ggml_dyn_tallocr`, one chunk).
#[derive(Default)]
struct Dyn {
    free: Vec<(u64, u64)>, // (offset, size), sorted by offset; the last one is unbounded
    max: u64,
}

impl Dyn {
    fn new() -> Dyn {
        Dyn {
            free: vec![(0, u64::MAX / 2)],
            max: 0,
        }
    }
    fn alloc(&mut self, size: u64) -> u64 {
        let size = size.div_ceil(ALIGN).saturating_mul(ALIGN);
        // the best fit among the blocks before the last (the smallest that fits; a later one
        // of the same size wins, as ggml's `<=`)
        let mut best: Option<usize> = None;
        let mut best_size = u64::MAX;
        let last = self.free.len() - 1;
        for (i, &(_, s)) in self.free[..last].iter().enumerate() {
            if s >= size && s <= best_size {
                best = Some(i);
                best_size = s;
            }
        }
        let i = best.unwrap_or(last);
        let (off, s) = self.free[i];
        let end = off.saturating_add(size);
        if i == last {
            // the end of the buffer: it grows
            self.free[i] = (end, u64::MAX / 2);
        } else if s == size {
            self.free.remove(i);
        } else {
            self.free[i] = (end, s - size);
        }
        self.max = self.max.max(end);
        off
    }
    fn release(&mut self, off: u64, size: u64) {
        let size = size.div_ceil(ALIGN).saturating_mul(ALIGN);
        let end = |(o, s): (u64, u64)| o.saturating_add(s);
        for i in 0..self.free.len() {
            let (bo, bs) = self.free[i];
            if end((bo, bs)) == off {
                self.free[i].1 = bs.saturating_add(size);
                if i + 1 < self.free.len() && end(self.free[i]) == self.free[i + 1].0 {
                    self.free[i].1 = self.free[i].1.saturating_add(self.free[i + 1].1);
                    self.free.remove(i + 1);
                }
                return;
            }
            if off.saturating_add(size) == bo {
                self.free[i] = (off, bs.saturating_add(size));
                if i > 0 && end(self.free[i - 1]) == off {
                    self.free[i - 1].1 = self.free[i - 1].1.saturating_add(self.free[i].1);
                    self.free.remove(i);
                }
                return;
            }
        }
        let at = self
            .free
            .iter()
            .position(|&(o, _)| o > off)
            .unwrap_or(self.free.len());
        self.free.insert(at, (off, size));
    }
}

/// ggml-alloc's graph allocation (`ggml_gallocr_alloc_graph_impl`) over the scheduler's graph
/// copy: each backend's peak.
fn allocate(
    g: &Graph,
    leafs: &[(usize, usize)],
    nodes: &[(usize, usize)],
    n_backends: usize,
) -> Vec<u64> {
    let n = g.t.len();
    let mut bufs: Vec<Dyn> = (0..n_backends).map(|_| Dyn::new()).collect();
    let mut children = vec![0u32; n];
    let mut views = vec![0u32; n];
    let mut allocated = vec![false; n];
    let mut addr = vec![(0usize, 0u64); n];
    let is_view = |i: usize| g.t[i].view_of.is_some();

    let alloc_node = |i: usize,
                      b: usize,
                      bufs: &mut Vec<Dyn>,
                      allocated: &mut Vec<bool>,
                      addr: &mut Vec<(usize, u64)>,
                      children: &Vec<u32>,
                      views: &Vec<u32>| {
        let t = &g.t[i];
        if allocated[i] || is_view(i) || t.pre.is_some() {
            return;
        }
        allocated[i] = true;
        if t.inplace {
            for &p in &t.srcs {
                let pt = &g.t[p];
                if !allocated[p] || pt.output || pt.layout != t.layout || pt.size != t.size {
                    continue;
                }
                if children[p] == 1 && views[p] == 0 {
                    addr[i] = addr[p];
                    allocated[p] = false;
                    return;
                }
            }
        }
        let off = bufs[b].alloc(t.size);
        addr[i] = (b, off);
    };

    for &(l, b) in leafs {
        alloc_node(
            l,
            b,
            &mut bufs,
            &mut allocated,
            &mut addr,
            &children,
            &views,
        );
    }
    for &(i, b) in nodes {
        let t = &g.t[i];
        if let (Some(v), false) = (t.view_of, t.op_none) {
            views[v] += 1;
        }
        if t.input {
            alloc_node(
                i,
                b,
                &mut bufs,
                &mut allocated,
                &mut addr,
                &children,
                &views,
            );
        }
        for &s in &t.srcs {
            children[s] += 1;
            if g.t[s].input {
                alloc_node(
                    s,
                    b,
                    &mut bufs,
                    &mut allocated,
                    &mut addr,
                    &children,
                    &views,
                );
            }
        }
    }
    for &(i, b) in nodes {
        let srcs = g.t[i].srcs.clone();
        for &p in &srcs {
            alloc_node(
                p,
                b,
                &mut bufs,
                &mut allocated,
                &mut addr,
                &children,
                &views,
            );
        }
        alloc_node(
            i,
            b,
            &mut bufs,
            &mut allocated,
            &mut addr,
            &children,
            &views,
        );
        for &p in &srcs {
            children[p] -= 1;
            if children[p] == 0 && views[p] == 0 {
                if let Some(v) = g.t[p].view_of {
                    views[v] -= 1;
                    if views[v] == 0 && children[v] == 0 && allocated[v] {
                        free(g, v, &mut bufs, &mut allocated, &addr);
                    }
                } else if allocated[p] {
                    free(g, p, &mut bufs, &mut allocated, &addr);
                }
            }
        }
    }
    bufs.iter().map(|d| d.max).collect()
}

fn free(g: &Graph, i: usize, bufs: &mut [Dyn], allocated: &mut [bool], addr: &[(usize, u64)]) {
    if g.t[i].output {
        return;
    }
    let (b, off) = addr[i];
    bufs[b].release(off, g.t[i].size);
    allocated[i] = false;
}
